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
  int64_t hook_ns = 5'000;        // pre-backward hook: between issuing a prefetch and the compute starting
  int64_t comm_delay_ns = 0;      // every collective of this rank starts this much later (a straggler)
  double unit_params = 1e6;
  bool memory_counters = true;
  double optimizer_scale = 1.0;   // measured optimizer state = scale × the model's prediction
  std::string hostile_name;       // when set, an extra compute range with this name
};

inline void write_trainer_trace(const std::filesystem::path& path, const TrainerTraceOptions& o) {
  using nlohmann::json;
  namespace k = keys;
  json units = json::array();
  for (int u = 0; u < o.units; ++u) units.push_back({{k::kCfgUnitId, u}, {k::kName, "block" + std::to_string(u)}, {k::kCfgUnitParams, o.unit_params}});
  json header = {{k::kSchemaVersion, k::kSchemaVersionValue},
                 {k::kRank, o.rank},
                 {k::kWorldSize, o.world},
                 {k::kRunConfig,
                  {{k::kCfgSharding, "full_shard"}, {k::kCfgBackwardPrefetch, o.prefetch}, {k::kCfgParamDtype, "bf16"}, {k::kWorldSize, o.world}, {k::kCfgUnits, units}}}};
  trace::Writer w(path, header);
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
  // Issues a collective at t; it runs when the communication thread is free. Returns its end.
  auto collective = [&](const char* kind, int unit, int64_t t, int64_t dur) {
    int64_t start = std::max(t, comm_free) + o.comm_delay_ns;
    comm_free = start + dur;
    range(comm, kind, k::kCatComm, start, dur,
          {{k::kArgUnit, unit}, {k::kArgBytes, int64_t(o.unit_params * 2)}, {k::kArgGroupSize, o.world}, {k::kArgIssuedNs, t}});
    return comm_free;
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
      int64_t hook = std::max(t, ready);
      if (o.prefetch == "pre" && u > 0) ready = collective(k::kAllGather, u - 1, hook, o.all_gather_ns);
      int64_t bc = hook + o.hook_ns;
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
    range(compute, k::kStepRange, k::kCatStep, step_start, t - step_start, {{k::kArgStep, s}});
    if (o.memory_counters) {
      counter(k::kMemoryShardedParams, t, 2 * psi / n);
      // Gathered: the root unit, the running unit and (with prefetch) the next one, bf16.
      counter(k::kMemoryUnshardedParams, t, 2 * o.unit_params * (o.prefetch == "pre" ? 3 : 2));
      counter(k::kMemoryGradients, t, 2 * psi / n);
      counter(k::kMemoryOptimizerState, t, o.optimizer_scale * 12 * psi / n);
    }
    t += 50'000;
  }
  w.close();
}

}  // namespace shardscope::test
