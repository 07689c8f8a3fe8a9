// PyTorch FSDP1 (FullyShardedDataParallel) labels its hooks with record_function, and no label names the
// module. The names, from torch/distributed/fsdp/_runtime_utils.py (PyTorch 2.1 to 2.x) and
// fully_sharded_data_parallel.py (FullyShardedDataParallel.forward):
//   _pre_forward        per unit, before its forward: its own unshard (all-gather) unless prefetched
//   _pre_forward_prefetch   inside _pre_forward: forward_prefetch of the next unit in forward order
//   _post_forward       per unit, after its forward
//   _pre_backward_hook  per unit, once per backward: its own unshard unless prefetched
//   _pre_backward_prefetch  inside it: BACKWARD_PRE's all-gather of the next unit in backward order
//   _post_backward_hook per unit: reshard, then the reduce-scatter
//   _post_backward_prefetch inside it: BACKWARD_POST's all-gather of the next unit in backward order
//   rate_limiter        inside _unshard: limit_all_gathers holding the issue back
// So units are inferred from order, as FSDP itself orders them (_exec_order_utils.py): unit k is the k-th
// _pre_forward of an iteration (0 is the root, whose forward encloses the others), and backward runs the
// reverse of the post-forward order (root first: its output's hook fires first), which is what FSDP's own
// backward prefetch assumes.
#include <algorithm>
#include <deque>

#include <fmt/format.h>

#include "plugins/kineto/fsdp_units.h"

namespace shardscope::plugins {
namespace {

constexpr std::string_view kPrefix = "FullyShardedDataParallel.";
constexpr std::string_view kPreForward = "FullyShardedDataParallel._pre_forward";
constexpr std::string_view kPreForwardPrefetch = "FullyShardedDataParallel._pre_forward_prefetch";
constexpr std::string_view kPostForward = "FullyShardedDataParallel._post_forward";
constexpr std::string_view kPreBackwardHook = "FullyShardedDataParallel._pre_backward_hook";
constexpr std::string_view kPreBackwardPrefetch = "FullyShardedDataParallel._pre_backward_prefetch";
constexpr std::string_view kPostBackwardHook = "FullyShardedDataParallel._post_backward_hook";
constexpr std::string_view kPostBackwardPrefetch = "FullyShardedDataParallel._post_backward_prefetch";
constexpr std::string_view kRateLimiter = "FullyShardedDataParallel.rate_limiter";

constexpr const char* kIdentity =
    "inferred from order, not named: PyTorch FSDP1's labels (FullyShardedDataParallel._pre_forward, ._pre_backward_hook, ...) name no module, "
    "so unit k is the k-th FSDP1 pre-forward of a step (unit 0 the root) and backward follows the reverse post-forward order";

// One iteration's labels: a forward (pre/post-forward hooks), then a backward (backward hooks; with
// activation checkpointing also the recomputation's pre/post-forward labels, which do nothing).
struct Iteration {
  std::vector<const HostLabel*> forward, backward;
};

// A new iteration begins at a pre-forward after backward began, once every unit whose pre-backward hook ran
// has had its post-backward hook (a recomputation's pre-forward comes before its unit's post-backward),
// and at every step boundary.
std::vector<Iteration> split(const std::vector<const HostLabel*>& labels, const std::vector<model::Step>& steps) {
  std::vector<Iteration> its(1);
  size_t pre_hooks = 0, post_hooks = 0;
  int step = -1;
  auto step_of = [&](int64_t ts) {
    int s = -1;
    for (size_t i = 0; i < steps.size(); ++i)
      if (steps[i].host_start_ns <= ts) s = int(i);
    return s;
  };
  for (const HostLabel* l : labels) {
    int s = step_of(l->ts);
    bool in_backward = !its.back().backward.empty();
    bool new_iteration = (s != step && (!its.back().forward.empty() || !its.back().backward.empty())) ||
                         (in_backward && l->name == kPreForward && post_hooks >= pre_hooks);
    step = s;
    if (new_iteration) {
      its.emplace_back();
      pre_hooks = post_hooks = 0;
      in_backward = false;
    }
    if (l->name == kPreBackwardHook) ++pre_hooks, in_backward = true;
    if (l->name == kPostBackwardHook) ++post_hooks;
    (in_backward ? its.back().backward : its.back().forward).push_back(l);
  }
  return its;
}

}  // namespace

std::optional<UnitLabels> fsdp1_units(const std::vector<HostLabel>& all, const std::vector<model::Step>& steps) {
  std::vector<const HostLabel*> labels;
  bool hooks = false;
  for (const HostLabel& h : all)
    if (h.name.substr(0, kPrefix.size()) == kPrefix) {
      labels.push_back(&h);
      hooks |= h.name == kPreForward || h.name == kPreBackwardHook;
    }
  if (!hooks) return std::nullopt;
  UnitLabels out;
  out.identity = kIdentity;
  size_t units = 0;
  for (const Iteration& it : split(labels, steps)) {
    // Forward: number the pre-forwards; a stack pairs each post-forward with its pre-forward (units nest:
    // the root's forward encloses the others), which gives the post-forward order.
    std::vector<std::pair<const HostLabel*, int>> pre_forward;
    std::vector<int> stack, post_order;
    for (const HostLabel* l : it.forward) {
      if (l->name == kPreForward) {
        int u = int(pre_forward.size());
        pre_forward.push_back({l, u});
        stack.push_back(u);
        out.gathers.push_back({l->ts, l->end, u});
      } else if (l->name == kPostForward && !stack.empty()) {
        post_order.push_back(stack.back());
        stack.pop_back();
      }
    }
    units = std::max(units, pre_forward.size());
    for (const HostLabel* l : it.forward)
      if (l->name == kPreForwardPrefetch)
        for (const auto& [pf, u] : pre_forward)
          if (pf->contains(*l) && u + 1 < int(pre_forward.size())) out.gathers.push_back({l->ts, l->end, u + 1});
    for (auto s = stack.rbegin(); s != stack.rend(); ++s) post_order.push_back(*s);  // forwards cut off by the trace's end
    std::vector<int> order(post_order.rbegin(), post_order.rend());  // backward order
    auto next_after = [&](int u) {
      auto p = std::find(order.begin(), order.end(), u);
      return p != order.end() && p + 1 != order.end() ? *(p + 1) : -1;
    };

    // Backward: the j-th pre-backward hook is order[j]; a post-backward hook belongs to the unit whose
    // backward began earliest and has not ended, the root last (its parameters are used first and last).
    std::vector<std::pair<const HostLabel*, int>> pre_hook, post_hook;
    std::deque<int> open;
    for (const HostLabel* l : it.backward) {
      if (l->name == kPreBackwardHook) {
        int u = pre_hook.size() < order.size() ? order[pre_hook.size()] : -1;
        pre_hook.push_back({l, u});
        if (pre_hook.size() == 1) out.backward_starts.push_back(l->ts);
        if (u < 0) continue;
        open.push_back(u);
        out.pre_backward.push_back({l->ts, l->end, u});
        out.gathers.push_back({l->ts, l->end, u});
      } else if (l->name == kPostBackwardHook && !open.empty()) {
        auto pick = open.begin();
        if (!order.empty() && *pick == order.front() && open.size() > 1) ++pick;
        int u = *pick;
        open.erase(pick);
        post_hook.push_back({l, u});
        out.post_backward.push_back({l->ts, l->end, u});
      }
    }
    for (const HostLabel* l : it.backward) {
      const std::vector<std::pair<const HostLabel*, int>>* owners = l->name == kPreBackwardPrefetch ? &pre_hook
                                                                    : l->name == kPostBackwardPrefetch ? &post_hook
                                                                                                       : nullptr;
      if (!owners) continue;
      for (const auto& [hook, u] : *owners)
        if (u >= 0 && hook->contains(*l))
          if (int next = next_after(u); next >= 0) out.gathers.push_back({l->ts, l->end, next});
    }
  }
  if (units == 0) return std::nullopt;
  // The limiter runs inside an unshard: its all-gather's unit is that of the innermost window around it.
  for (const HostLabel* l : labels) {
    if (l->name != kRateLimiter) continue;
    const UnitWindow* best = nullptr;
    for (const UnitWindow& w : out.gathers)
      if (w.ts <= l->ts && l->ts < w.end && (!best || w.ts >= best->ts)) best = &w;
    out.rate_limited.push_back({l->ts, l->end, best ? best->unit : -1});
  }
  for (size_t u = 0; u < units; ++u) out.names.push_back(u == 0 ? "unit 0 (root, by order)" : fmt::format("unit {} (by order)", u));
  return out;
}

}  // namespace shardscope::plugins
