#include "analyzer/metrics/memory_model.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "tracer/format/keys.h"
#include "tracer/format/run_config.h"

namespace shardscope::metrics {

using sizing::activation_config_from_run;
using sizing::config_from_run;
using sizing::MemoryNa;
using sizing::MemoryPrediction;
using sizing::predict;
using sizing::predict_activations;

namespace {

bool any_measured_counter(const model::Rank& rank) {
  for (const char* c :
       {keys::kMemoryShardedParams, keys::kMemoryUnshardedParams, keys::kMemoryGradients, keys::kMemoryOptimizerState})
    if (rank.counter(c)) return true;
  return false;
}
// The value `s` held at `t`: its last sample at or before it (0 before the first).
double value_at(const model::CounterSeries& s, int64_t t) {
  double v = 0;
  for (const model::CounterSample& x : s.samples) {
    if (x.ts_ns > t) break;
    v = x.value;
  }
  return v;
}

// Splits the allocator total where the categories together hold the most (of the moments it was sampled
// at: the device's used memory stays near its peak once the caching allocator holds it, while the
// categories' bytes come and go within a step): each category's bytes then, and a "rest" row with the
// difference, so that the rows add up to the total there.
void split_total(const model::Rank& rank, RankMemory& out) {
  const model::CounterSeries* total = rank.counter(keys::kMemoryAllocatorTotal);
  if (!total || total->samples.empty()) return;
  std::vector<const model::CounterSeries*> series;  // one per row: the category's counter, if any
  for (const MemoryRow& row : out.rows) {
    const std::string name = "memory." + row.category;
    const bool category = name != keys::kMemoryHostOffloaded && name != keys::kMemoryAllocatorTotal;
    series.push_back(category ? rank.counter(name) : nullptr);
  }
  auto counted_at = [&](int64_t t) {
    double sum = 0;
    for (const model::CounterSeries* s : series)
      if (s) sum += value_at(*s, t);
    return sum;
  };
  const model::CounterSample* fullest = &total->samples.front();
  double most = -1;
  for (const model::CounterSample& x : total->samples)
    if (const double c = counted_at(x.ts_ns); c > most) most = c, fullest = &x;
  for (size_t i = 0; i < out.rows.size(); ++i) {
    const std::string name = "memory." + out.rows[i].category;
    if (name == keys::kMemoryAllocatorTotal) out.rows[i].at_fullest = fullest->value;
    else if (name != keys::kMemoryHostOffloaded)
      out.rows[i].at_fullest = series[i] ? value_at(*series[i], fullest->ts_ns) : 0.0;
  }
  MemoryRow rest;
  rest.category = kMemoryRest;
  rest.measured = rest.at_fullest = fullest->value - most;
  rest.predicted_na = {MemoryNa::Code::Rest};
  out.rows.push_back(rest);
}
}  // namespace

RankMemory compare_memory(const model::Rank& rank) {
  using Code = MemoryNa::Code;
  RankMemory out;
  out.rank = rank.rank;
  out.config = config_from_run(rank.shape, rank.world_size, out.states_na);
  std::optional<MemoryPrediction> p;
  if (out.config) p = predict(*out.config);
  if (auto ac = activation_config_from_run(rank.shape, out.activations_na)) out.activations = predict_activations(*ac);
  struct Cat {
    const char* counter;
    std::optional<double> predicted;
    MemoryNa why_not;  // why there is no prediction
  };
  const MemoryNa& no_config = out.states_na;
  const Cat cats[] = {
      {keys::kMemoryShardedParams, p ? std::optional(p->sharded_params()) : std::nullopt, no_config},
      {keys::kMemoryUnshardedParams, p ? std::optional(p->unsharded_params()) : std::nullopt, no_config},
      {keys::kMemoryGradients, p ? std::optional(p->gradients) : std::nullopt, no_config},
      {keys::kMemoryOptimizerState, p ? std::optional(p->optimizer_state) : std::nullopt, no_config},
      {keys::kMemoryHostOffloaded, p && out.config->offload ? std::optional(p->host_offloaded) : std::nullopt,
       p ? MemoryNa{Code::NoOffload} : no_config},
      {keys::kMemoryActivations, out.activations ? std::optional(out.activations->bytes) : std::nullopt,
       out.activations_na},
      {keys::kMemoryAllocatorTotal, std::nullopt, {Code::AllocatorTotal}},
  };
  bool any_measured = false;
  double worst = -1;
  for (const Cat& c : cats) {
    MemoryRow row;
    row.category = std::string(c.counter).substr(7);  // without "memory."
    if (const model::CounterSeries* s = rank.counter(c.counter)) row.measured = s->peak(), any_measured = true;
    row.predicted = c.predicted;
    if (!row.measured && !row.predicted && c.counter == keys::kMemoryHostOffloaded) continue;  // no offload
    // A counter that never left zero is never written: with a prediction beside it, it measured zero.
    if (!row.measured && row.predicted && any_measured_counter(rank)) row.measured = 0.0;
    if (!row.measured) row.measured_na = {Code::NoCounter};
    if (!row.predicted) row.predicted_na = c.why_not ? c.why_not : MemoryNa{Code::ModelSilent};
    if (row.measured && row.predicted) {
      double diff = *row.measured - *row.predicted;
      double rel = std::fabs(diff) / std::max(*row.predicted, 1.0);
      if (rel > worst) {
        worst = rel;
        out.departs_most = out.rows.size();
      }
    }
    out.rows.push_back(row);
  }
  out.all_agree = worst >= 0 && worst < kMemoryAgreement;
  out.no_counters = !any_measured;
  split_total(rank, out);
  out.measured = measure_memory(rank);
  return out;
}

}  // namespace shardscope::metrics
