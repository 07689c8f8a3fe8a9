// FSDP2 (fully_shard) wraps its work in record_function labels that name the module: "FSDP::all_gather
// (layers.3)", "FSDP::pre_backward (layers.3)", "FSDP::post_backward_reduce (layers.3)"
// (torch/distributed/fsdp/_fully_shard/_fsdp_param_group.py: _with_fqn).
#include <map>

#include "plugins/kineto/fsdp_units.h"

namespace shardscope::plugins {
namespace {

constexpr std::string_view kPrefix = "FSDP::";
constexpr std::string_view kAllGather = "FSDP::all_gather";
constexpr std::string_view kPreBackward = "FSDP::pre_backward";
constexpr std::string_view kPostBackward = "FSDP::post_backward";  // also matches _reduce and _reshard

struct Label {
  std::string_view kind;  // "FSDP::all_gather"
  std::string_view fqn;   // "layers.3"
};

// "FSDP::all_gather (layers.3)" -> {"FSDP::all_gather", "layers.3"}; anything else has no fqn.
Label parse(std::string_view name) {
  if (name.substr(0, kPrefix.size()) != kPrefix || name.empty() || name.back() != ')') return {};
  size_t open = name.rfind(" (");
  if (open == std::string_view::npos) return {};
  return {name.substr(0, open), name.substr(open + 2, name.size() - open - 3)};
}

}  // namespace

std::optional<UnitLabels> fsdp2_units(const std::vector<HostLabel>& all) {
  std::vector<std::pair<Label, const HostLabel*>> labels;
  for (const HostLabel& h : all)
    if (Label l = parse(h.name); !l.fqn.empty()) labels.push_back({l, &h});
  if (labels.empty()) return std::nullopt;
  UnitLabels out;
  // Units numbered in forward order (the first label naming each module), so backward runs them downwards.
  std::map<std::string_view, int> unit_of;
  for (const auto& [l, h] : labels)
    if (unit_of.emplace(l.fqn, int(out.names.size())).second) out.names.emplace_back(l.fqn);
  bool forward_since_last = true;
  for (const auto& [l, h] : labels) {
    UnitWindow w{h->ts, h->end, unit_of.at(l.fqn)};
    bool post = l.kind.substr(0, kPostBackward.size()) == kPostBackward;
    if (l.kind == kAllGather) {
      out.gathers.push_back(w);
    } else if (l.kind == kPreBackward) {
      // A backward pass starts at the first pre-backward hook after forward labels (a new iteration).
      if (forward_since_last) out.backward_starts.push_back(h->ts);
      forward_since_last = false;
      out.pre_backward.push_back(w);
    } else if (post) {
      out.post_backward.push_back(w);
    } else {
      forward_since_last = true;
    }
  }
  return out;
}

}  // namespace shardscope::plugins
