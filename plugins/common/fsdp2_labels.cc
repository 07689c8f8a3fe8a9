// FSDP2 (fully_shard) wraps each parameter group's work in record_function labels that name the module:
// "FSDP::all_gather (layers.3)", "FSDP::pre_backward (layers.3)", "FSDP::post_backward_reduce (layers.3)"
// (torch/distributed/fsdp/_fully_shard/_fsdp_param_group.py: _with_fqn appends " (fqn)" when the module's
// fqn is not empty). The root module's fqn is empty, so the root's group labels carry no "(fqn)":
// "FSDP::pre_forward", "FSDP::all_gather", "FSDP::pre_backward". A prefetch names its target instead:
// "FSDP::backward_prefetch for layers.2" (_fsdp_state.py / _fsdp_param_group.py). State-level labels
// ("FSDP::root_pre_forward", "FSDP::inputs_to_device", "FSDP::root_post_backward_callback") belong to no
// group.
#include <map>

#include "plugins/common/fsdp_units.h"

namespace shardscope::plugins {
namespace {

constexpr std::string_view kFsdp2Prefix = "FSDP::";
constexpr std::string_view kAllGather = "FSDP::all_gather";
constexpr std::string_view kFsdp2PreForward = "FSDP::pre_forward";
constexpr std::string_view kFsdp2PostForward = "FSDP::post_forward";
constexpr std::string_view kPreBackward = "FSDP::pre_backward";
constexpr std::string_view kPostBackward = "FSDP::post_backward";  // also matches _accumulate, _reshard and _reduce
constexpr std::string_view kRootPreForward = "FSDP::root_pre_forward";
constexpr std::string_view kPrefetchFor =
    "_prefetch for ";  // "FSDP::backward_prefetch for x", "FSDP::forward_prefetch for x"
constexpr const char* kRootName = "root";

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// The labels a parameter group writes through _with_fqn, which are the root's when they carry no fqn.
bool group_kind(std::string_view kind) {
  return kind == kFsdp2PreForward || kind == kFsdp2PostForward || kind == kAllGather ||
         kind == "FSDP::all_gather_copy_in" || kind == "FSDP::all_gather_copy_out" || kind == kPreBackward ||
         starts_with(kind, kPostBackward);
}

struct Label {
  std::string_view kind;  // "FSDP::all_gather"
  std::string_view fqn;   // "layers.3"; "" for the root
  bool group = false;     // a parameter group's label (kind and fqn name the unit)
  bool prefetch = false;  // "FSDP::<pass>_prefetch for <fqn>": an all-gather issued for <fqn>
};

Label parse(std::string_view name) {
  Label l;
  if (!starts_with(name, kFsdp2Prefix)) return l;
  if (size_t p = name.find(kPrefetchFor); p != std::string_view::npos) {
    l.kind = name.substr(0, p + kPrefetchFor.size() - 1);
    l.fqn = name.substr(p + kPrefetchFor.size());
    l.prefetch = !l.fqn.empty();
    return l;
  }
  l.kind = name;
  if (!name.empty() && name.back() == ')')
    if (size_t open = name.rfind(" ("); open != std::string_view::npos) {
      l.kind = name.substr(0, open);
      l.fqn = name.substr(open + 2, name.size() - open - 3);
    }
  l.group = group_kind(l.kind);
  return l;
}

}  // namespace

std::optional<UnitLabels> fsdp2_units(const std::vector<HostLabel>& all) {
  std::vector<std::pair<Label, const HostLabel*>> labels;
  bool any_group = false;
  for (const HostLabel& h : all) {
    Label l = parse(h.name);
    if (l.kind.empty()) continue;
    any_group |= l.group;
    labels.push_back({l, &h});
  }
  if (!any_group) return std::nullopt;
  UnitLabels out;
  // Units numbered in forward order (the first label naming each module: the root's pre-forward comes
  // first), so backward runs them downwards.
  std::map<std::string_view, int> unit_of;
  auto unit = [&](std::string_view fqn) {
    auto [it, fresh] = unit_of.emplace(fqn, int(out.names.size()));
    if (fresh) out.names.emplace_back(fqn.empty() ? std::string(kRootName) : std::string(fqn));
    return it->second;
  };
  for (const auto& [l, h] : labels)
    if (l.group) unit(l.fqn);
  // A backward pass starts at the first pre-backward hook after the root's forward began (the root's
  // pre-forward runs once an iteration), or in a new ProfilerStep.
  bool forward_since_last = true;
  int32_t pass_step = INT32_MIN;
  for (const auto& [l, h] : labels) {
    if (l.prefetch) {
      if (auto it = unit_of.find(l.fqn); it != unit_of.end())
        out.gathers.push_back({h->ts, h->end, it->second, h->track, h->step});
      continue;
    }
    if (!l.group) {
      if (l.kind == kRootPreForward) forward_since_last = true;
      continue;
    }
    UnitWindow w{h->ts, h->end, unit_of.at(l.fqn), h->track, h->step};
    if (l.kind == kAllGather) {
      out.gathers.push_back(w);
    } else if (l.kind == kPreBackward) {
      if (forward_since_last || h->step != pass_step) out.backward_starts.push_back(h);
      forward_since_last = false;
      pass_step = h->step;
      out.pre_backward.push_back(w);
    } else if (starts_with(l.kind, kPostBackward)) {
      out.post_backward.push_back(w);
    } else if (l.kind == kFsdp2PreForward && l.fqn.empty()) {
      forward_since_last = true;
    }
  }
  return out;
}

}  // namespace shardscope::plugins
