// Writes real trace files in the trainer's contract (tracer/format/keys.h) with trace::Writer: steps,
// forward/backward/optimizer phases, per-unit compute ranges, collectives on a communication thread that
// runs them one at a time in issue order (as one NCCL/Gloo stream does), memory counters and run_config.
// The backward layout follows SPEC: with "pre" the next unit's all-gather is issued in unit i's
// pre-backward hook, before BC_i starts; with "none", only in unit i-1's own hook, after BC_i and its
// reduce-scatter.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tracer/format/event.h"
#include "tracer/format/keys.h"
#include "tracer/format/writer.h"

namespace shardscope::test {

struct TrainerTraceOptions {
  int rank = 0;
  int world = 2;
  int units = 4;
  int steps = 2;
  std::string prefetch = "pre";  // "pre" or "none"
  int64_t t0_ns = 1'000'000'000;
  int64_t forward_ns = 400'000;   // one unit's forward compute
  int64_t backward_ns = 800'000;  // one unit's backward compute
  int64_t all_gather_ns = 300'000;
  int64_t reduce_scatter_ns = 200'000;
  int64_t hook_ns = 5'000;    // pre-backward hook: between issuing a prefetch and the compute starting
  int64_t comm_delay_ns = 0;  // every collective of this rank starts this much later (a straggler)
  double unit_params = 1e6;
  bool memory_counters = true;
  double optimizer_scale = 1.0;  // measured optimizer state = scale × the model's prediction
  double activations_bytes = 0;  // > 0: a memory.activations counter with this peak
  std::string hostile_name;      // when set, an extra compute range with this name
  // The rate limiter: at most this many all-gathers issued and not yet complete when a backward prefetch is
  // issued (0: none, and no limit_all_gathers in run_config). Each time it holds an issue back, the
  // trainer's "rate_limited" instant is written.
  int limit_all_gathers = 0;
  // As FSDP on a GPU: the pre-backward hook issues the prefetch without first waiting for its own unit's
  // all-gather (only the compute waits for it). Otherwise, as the CPU trainer: it waits, then issues.
  bool issue_before_wait = false;
  // (monotonic ns, realtime ns) clock pairs: the first goes in the header, the rest as clock_sync events.
  std::vector<std::pair<int64_t, int64_t>> clock_pairs;
  nlohmann::json run_config_extra = nlohmann::json::object();  // merged into run_config (model, batch_size, ...)
  std::vector<int> aborted_steps;  // these steps' ranges carry args.aborted, as the trainer marks a step cut off
};

inline void write_trainer_trace(const std::filesystem::path& path, const TrainerTraceOptions& o) {
  using nlohmann::json;
  namespace k = keys;
  json units = json::array();
  for (int u = 0; u < o.units; ++u)
    units.push_back({{k::kCfgUnitId, u}, {k::kName, "block" + std::to_string(u)}, {k::kCfgUnitParams, o.unit_params}});
  json run_config = {{k::kCfgSharding, "full_shard"},
                     {k::kCfgBackwardPrefetch, o.prefetch},
                     {k::kCfgParamDtype, "bf16"},
                     {k::kWorldSize, o.world},
                     {k::kCfgUnits, units}};
  if (o.limit_all_gathers > 0) run_config[k::kCfgLimitAllGathers] = o.limit_all_gathers;
  run_config.update(o.run_config_extra);
  json header = {{k::kSchemaVersion, k::kSchemaVersionValue},
                 {k::kRank, o.rank},
                 {k::kWorldSize, o.world},
                 {k::kRunConfig, run_config}};
  if (!o.clock_pairs.empty())
    header[k::kClock] = {
        {k::kClockDomain, k::kClockMonotonic},
        {k::kClockUnit, k::kUnitNs},
        {k::kClockSync,
         {{k::kMonotonicNs, o.clock_pairs[0].first}, {k::kRealtimeNs, o.clock_pairs[0].second}, {k::kBracketNs, 100}}}};
  trace::Writer w(path, header);
  for (size_t i = 1; i < o.clock_pairs.size(); ++i) {
    trace::Event e;
    e.ph = 'M';
    e.name = k::kClockSyncEvent;
    e.pid = o.rank;
    e.args = {
        {k::kMonotonicNs, o.clock_pairs[i].first}, {k::kRealtimeNs, o.clock_pairs[i].second}, {k::kBracketNs, 100}};
    w.append(e);
  }
  const int64_t compute = 1, comm = 2;
  auto meta = [&](int64_t tid, const char* name) {
    trace::Event e;
    e.ph = 'M';
    e.name = k::kThreadName;
    e.pid = o.rank;
    e.tid = tid;
    e.args = {{k::kName, name}};
    w.append(e);
  };
  meta(compute, "compute");
  meta(comm, "comm");
  auto range = [&](int64_t tid, const std::string& name, const char* cat, int64_t ts, int64_t dur, json args) {
    trace::Event e;
    e.name = name;
    e.cat = cat;
    e.pid = o.rank;
    e.tid = tid;
    e.ts_ns = ts;
    e.dur_ns = dur;
    e.args = std::move(args);
    w.append(e);
  };
  int64_t comm_free = 0;
  std::vector<std::pair<int64_t, int64_t>> gathers;  // (issued, end) of every all-gather so far
  // Issues a collective at t; it runs when the communication thread is free. Returns its end.
  auto collective = [&](const char* kind, int unit, int64_t t, int64_t dur) {
    int64_t start = std::max(t, comm_free) + o.comm_delay_ns;
    comm_free = start + dur;
    if (std::string_view(kind) == k::kAllGather) gathers.push_back({t, comm_free});
    range(comm, kind, k::kCatComm, start, dur,
          {{k::kArgUnit, unit},
           {k::kArgBytes, int64_t(o.unit_params * 2)},
           {k::kArgGroupSize, o.world},
           {k::kArgIssuedNs, t}});
    return comm_free;
  };
  auto instant = [&](int64_t tid, const char* name, int64_t ts, json args) {
    trace::Event e;
    e.ph = 'i';
    e.name = name;
    e.cat = k::kCatFsdp;
    e.pid = o.rank;
    e.tid = tid;
    e.ts_ns = ts;
    e.args = std::move(args);
    w.append(e);
  };
  auto counter = [&](const char* name, int64_t ts, double v) {
    trace::Event e;
    e.ph = 'C';
    e.name = name;
    e.cat = k::kCatCounter;
    e.pid = o.rank;
    e.tid = compute;
    e.ts_ns = ts;
    e.args = {{k::kValue, v}};
    w.append(e);
  };
  const double psi = o.unit_params * o.units, n = o.world;
  int64_t t = o.t0_ns;
  for (int s = 0; s < o.steps; ++s) {
    int64_t step_start = t;
    // Forward: each unit's all-gather, then its compute.
    int64_t fwd_start = t;
    for (int u = 0; u < o.units; ++u) {
      int64_t ready = collective(k::kAllGather, u, t, o.all_gather_ns);
      t = std::max(t, ready);
      range(compute, k::kUnitForward, k::kCatCompute, t, o.forward_ns, {{k::kArgUnit, u}});
      t += o.forward_ns;
    }
    range(compute, k::kForwardPhase, k::kCatPhase, fwd_start, t - fwd_start, json::object());
    // Backward, units in reverse order.
    int64_t bwd_start = t;
    int64_t ready = collective(k::kAllGather, o.units - 1, t, o.all_gather_ns);  // the last unit's own all-gather
    for (int u = o.units - 1; u >= 0; --u) {
      const int64_t own_ready = ready;
      int64_t hook = o.issue_before_wait ? t : std::max(t, ready), issue = hook;
      if (o.prefetch == "pre" && u > 0) {
        // The limiter: while the all-gathers in flight are at the limit, wait for the oldest to complete.
        for (bool marked = false; o.limit_all_gathers > 0;) {
          std::vector<int64_t> in_flight;
          for (auto [issued, end] : gathers)
            if (issued <= issue && end > issue) in_flight.push_back(end);
          if (int(in_flight.size()) < o.limit_all_gathers) break;
          if (!marked) instant(compute, k::kRateLimited, issue, {{k::kArgUnit, u - 1}});
          marked = true;
          issue = *std::min_element(in_flight.begin(), in_flight.end());
        }
        ready = collective(k::kAllGather, u - 1, issue, o.all_gather_ns);
      }
      int64_t bc = std::max(issue, own_ready) + o.hook_ns;
      range(compute, k::kUnitBackward, k::kCatCompute, bc, o.backward_ns, {{k::kArgUnit, u}});
      t = bc + o.backward_ns;
      collective(k::kReduceScatter, u, t, o.reduce_scatter_ns);
      if (o.prefetch != "pre" && u > 0) ready = collective(k::kAllGather, u - 1, t, o.all_gather_ns);
    }
    t = std::max(t, comm_free);
    range(compute, k::kBackwardPhase, k::kCatPhase, bwd_start, t - bwd_start, json::object());
    range(compute, k::kOptimizerPhase, k::kCatPhase, t, 100'000, json::object());
    t += 100'000;
    if (!o.hostile_name.empty()) {
      range(compute, o.hostile_name, k::kCatCompute, t, 1'000, json::object());
      t += 1'000;
    }
    json step_args = {{k::kArgStep, s}};
    if (std::find(o.aborted_steps.begin(), o.aborted_steps.end(), s) != o.aborted_steps.end())
      step_args[k::kArgAborted] = "planted";
    range(compute, k::kStepRange, k::kCatStep, step_start, t - step_start, step_args);
    if (o.memory_counters) {
      // As the trainer counts under bf16: an fp32 master shard, fp32 gradient shard, AdamW's two moments.
      counter(k::kMemoryShardedParams, t, 4 * psi / n);
      // Gathered: the root unit, the running unit and (with prefetch) the next one, bf16.
      counter(k::kMemoryUnshardedParams, t, 2 * o.unit_params * (o.prefetch == "pre" ? 3 : 2));
      counter(k::kMemoryGradients, t, 4 * psi / n);
      counter(k::kMemoryOptimizerState, t, o.optimizer_scale * 8 * psi / n);
      if (o.activations_bytes > 0) counter(k::kMemoryActivations, t, o.activations_bytes);
    }
    t += 50'000;
  }
  w.close();
}

}  // namespace shardscope::test
