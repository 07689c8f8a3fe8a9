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

#include "plugins/common/fsdp_units.h"
#include "tracer/format/keys.h"

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

// One iteration's labels: a forward (pre/post-forward hooks), then a backward (backward hooks; with
// activation checkpointing also the recomputation's pre/post-forward labels, which do nothing).
struct Iteration {
  std::vector<const HostLabel*> forward, backward;
};

// A new iteration begins at every ProfilerStep boundary, and at a pre-forward after backward began once
// every unit whose pre-backward hook ran has had its post-backward hook (a recomputation's pre-forward comes
// before its unit's post-backward).
std::vector<Iteration> split(const std::vector<const HostLabel*>& labels) {
  std::vector<Iteration> its(1);
  size_t pre_hooks = 0, post_hooks = 0;
  int32_t step = labels.empty() ? -1 : labels.front()->step;
  bool in_backward = false;
  for (const HostLabel* l : labels) {
    bool new_iteration = (l->step != step && (!its.back().forward.empty() || !its.back().backward.empty())) ||
                         (in_backward && l->name == kPreForward && post_hooks >= pre_hooks);
    step = l->step;
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

std::optional<UnitLabels> fsdp1_units(const std::vector<HostLabel>& all) {
  std::vector<const HostLabel*> labels;
  bool hooks = false;
  for (const HostLabel& h : all)
    if (h.name.substr(0, kPrefix.size()) == kPrefix) {
      labels.push_back(&h);
      hooks |= h.name == kPreForward || h.name == kPreBackwardHook;
    }
  if (!hooks) return std::nullopt;
  UnitLabels out;
  out.identity = model::UnitIdentity::InferredFromOrder;
  size_t units = 0;
  auto window = [](const HostLabel* l, int u) { return UnitWindow{l->ts, l->end, u, l->track, l->step}; };
  for (const Iteration& it : split(labels)) {
    // Forward: number the pre-forwards; a stack pairs each post-forward with its pre-forward (units nest:
    // the root's forward encloses the others), which gives the post-forward order. A forward prefetch lies
    // inside the pre-forward that issued it and gathers the next unit in forward order.
    int pre_forwards = 0;
    const HostLabel* last_pre_forward = nullptr;
    std::vector<int> stack, post_order;
    std::vector<UnitWindow> forward_prefetches;
    for (const HostLabel* l : it.forward) {
      if (l->name == kPreForward) {
        int u = pre_forwards++;
        stack.push_back(u);
        last_pre_forward = l;
        out.gathers.push_back(window(l, u));
      } else if (l->name == kPostForward && !stack.empty()) {
        post_order.push_back(stack.back());
        stack.pop_back();
      } else if (l->name == kPreForwardPrefetch && last_pre_forward && last_pre_forward->contains(*l)) {
        forward_prefetches.push_back(window(l, pre_forwards));  // the unit after the one whose pre-forward holds it
      }
    }
    for (const UnitWindow& w : forward_prefetches)  // one from the last pre-forward names no unit
      if (w.unit < pre_forwards) out.gathers.push_back(w);
    units = std::max(units, size_t(pre_forwards));
    for (auto s = stack.rbegin(); s != stack.rend(); ++s)
      post_order.push_back(*s);                                      // forwards cut off by the trace's end
    std::vector<int> order(post_order.rbegin(), post_order.rend());  // backward order
    std::vector<int> next_in_backward(size_t(pre_forwards), -1);
    for (size_t k = 0; k + 1 < order.size(); ++k) next_in_backward[size_t(order[k])] = order[k + 1];

    // Backward: the j-th pre-backward hook is order[j]; a post-backward hook belongs to the unit whose
    // backward began earliest and has not ended, the root last (its parameters are used first and last).
    // A backward prefetch lies inside the hook that issued it and gathers the unit after that hook's.
    size_t pre_hooks = 0;
    std::deque<int> open;
    const HostLabel *last_pre = nullptr, *last_post = nullptr;
    int last_pre_unit = -1, last_post_unit = -1;
    for (const HostLabel* l : it.backward) {
      if (l->name == kPreBackwardHook) {
        int u = pre_hooks < order.size() ? order[pre_hooks] : -1;
        if (pre_hooks++ == 0) out.backward_starts.push_back(l);
        last_pre = l, last_pre_unit = u;
        if (u < 0) continue;
        open.push_back(u);
        out.pre_backward.push_back(window(l, u));
        out.gathers.push_back(window(l, u));
      } else if (l->name == kPostBackwardHook) {
        last_post = l, last_post_unit = -1;
        if (open.empty()) continue;
        auto pick = open.begin();
        if (!order.empty() && *pick == order.front() && open.size() > 1) ++pick;
        last_post_unit = *pick;
        open.erase(pick);
        out.post_backward.push_back(window(l, last_post_unit));
      } else if (l->name == kPreBackwardPrefetch || l->name == kPostBackwardPrefetch) {
        bool pre = l->name == kPreBackwardPrefetch;
        const HostLabel* hook = pre ? last_pre : last_post;
        int u = pre ? last_pre_unit : last_post_unit;
        if (hook && u >= 0 && hook->contains(*l))
          if (int next = next_in_backward[size_t(u)]; next >= 0) out.gathers.push_back(window(l, next));
      }
    }
  }
  if (units == 0) return std::nullopt;
  for (const HostLabel* l : labels)
    if (l->name == kRateLimiter) out.rate_limited.push_back(l);
  for (size_t u = 0; u < units; ++u)
    out.names.push_back(u == size_t(keys::kRootUnit) ? "unit 0 (root, by order)"
                                                     : fmt::format("unit {} (by order)", u));
  return out;
}

}  // namespace shardscope::plugins
