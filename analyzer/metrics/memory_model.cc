#include "analyzer/metrics/memory_model.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "model/saturating.h"
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

// Each row's prediction from m.config and m.activations, and which row departs most.
void predict_rows(RankMemory& m) {
  using Code = MemoryNa::Code;
  std::optional<MemoryPrediction> p;
  if (m.config) p = predict(*m.config);
  const MemoryNa& no_config = m.states_na;
  // The model counts AdamW's moments: for another optimizer, or none named, it says nothing about the state.
  MemoryNa optimizer_na = no_config;
  const MemoryInput& opt = m.inputs.optimizer;
  std::string o = opt.text;
  std::transform(o.begin(), o.end(), o.begin(), [](unsigned char ch) { return char(std::tolower(ch)); });
  const bool optimizer_known = p && (opt.origin == InputOrigin::RunConfig || o == "adamw" || o == "adam");
  if (p && !optimizer_known) optimizer_na = {Code::OptimizerNotModelled, opt.text};
  auto value = [&](double v) { return p ? std::optional(v) : std::nullopt; };
  m.departs_most.reset();
  double worst = -1;
  for (auto it = m.rows.begin(); it != m.rows.end();) {
    MemoryRow& row = *it;
    const std::string c = "memory." + row.category;
    std::optional<double> predicted;
    MemoryNa why = no_config;
    if (c == keys::kMemoryShardedParams) predicted = value(p ? p->sharded_params() : 0);
    else if (c == keys::kMemoryUnshardedParams)
      predicted = value(p ? p->unsharded_params() : 0);
    else if (c == keys::kMemoryGradients)
      predicted = value(p ? p->gradients : 0);
    else if (c == keys::kMemoryOptimizerState)
      predicted = optimizer_known ? value(p->optimizer_state) : std::nullopt, why = optimizer_na;
    else if (c == keys::kMemoryHostOffloaded)
      predicted = p && m.config->offload ? std::optional(p->host_offloaded) : std::nullopt,
      why = p ? MemoryNa{Code::NoOffload} : no_config;
    else if (c == keys::kMemoryActivations)
      predicted = m.activations ? std::optional(m.activations->bytes) : std::nullopt, why = m.activations_na;
    else if (is_rest_row(row.category))
      why = {Code::Rest, row.category == kMemoryRest ? "" : row.category};
    else
      why = {Code::AllocatorTotal};
    if (!row.measured && !predicted && c == keys::kMemoryHostOffloaded) {  // no offload: no row
      it = m.rows.erase(it);
      continue;
    }
    row.predicted = predicted;
    row.predicted_na = predicted ? MemoryNa{} : why ? why : MemoryNa{Code::ModelSilent};
    // A counter that never left zero is never written: with a prediction beside it, it measured zero.
    if (!row.measured && row.predicted && m.state_counters) row.measured = 0.0, row.measured_na = {};
    if (row.measured && row.predicted) {
      double rel = std::fabs(*row.measured - *row.predicted) / std::max(*row.predicted, 1.0);
      if (rel > worst) worst = rel, m.departs_most = size_t(it - m.rows.begin());
    }
    ++it;
  }
  m.all_agree = worst >= 0 && worst < kMemoryAgreement;
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
// Returns the fullest sample's time, or INT64_MIN without an allocator total.
int64_t split_total(const model::Rank& rank, RankMemory& out) {
  const model::CounterSeries* total = rank.counter(keys::kMemoryAllocatorTotal);
  if (!total || total->samples.empty()) return INT64_MIN;
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
  // Between moments the categories hold alike (none: a trace with the total alone), the fuller device.
  for (const model::CounterSample& x : total->samples)
    if (const double c = counted_at(x.ts_ns); c > most || (c == most && x.value > fullest->value))
      most = c, fullest = &x;
  for (size_t i = 0; i < out.rows.size(); ++i) {
    const std::string name = "memory." + out.rows[i].category;
    if (name == keys::kMemoryAllocatorTotal) out.rows[i].at_fullest = fullest->value;
    else if (series[i])
      out.rows[i].at_fullest = value_at(*series[i], fullest->ts_ns);
    else if (name != keys::kMemoryHostOffloaded && out.state_counters)
      out.rows[i].at_fullest = 0.0;  // the trainer's: a counter never written never left zero
  }
  MemoryRow rest;
  rest.category = kMemoryRest;
  rest.measured = rest.at_fullest = fullest->value - most;
  rest.predicted_na = {MemoryNa::Code::Rest};
  out.rows.push_back(rest);
  return fullest->ts_ns;
}

// Replaces the rest row by `parts` (category, bytes), each a rest row of its own name.
void replace_rest(std::vector<MemoryRow>::iterator rest, std::vector<MemoryRow>& rows,
                  std::initializer_list<std::pair<const char*, double>> parts) {
  std::vector<MemoryRow> split;
  for (const auto& [category, bytes] : parts) {
    MemoryRow r;
    r.category = category;
    r.measured = r.at_fullest = bytes;
    r.predicted_na = {MemoryNa::Code::Rest, category};
    split.push_back(r);
  }
  rest = rows.erase(rest);
  rows.insert(rest, split.begin(), split.end());
}

// The rest row as cached_free and other_allocated, where the measured device's last allocator event at or
// before the fullest moment says the reserved total: reserved less allocated is what the caching allocator
// holds free then. Where the trace instead samples the allocator's reserved and allocated bytes with its
// total (shardscope-train on a GPU), also outside_allocator: the total less reserved. Where it samples the
// reserved total alone with the total (the injection library), the rest is the reserved bytes no category counts
// and outside_allocator.
void split_rest(const model::Rank& rank, int64_t fullest_ts, RankMemory& out) {
  auto rest =
      std::find_if(out.rows.begin(), out.rows.end(), [](const MemoryRow& r) { return r.category == kMemoryRest; });
  if (rest == out.rows.end()) return;
  const double all = *rest->measured;
  const model::CounterSeries* reserved = rank.counter(keys::kMemoryAllocatorReserved);
  const model::CounterSeries* allocated = rank.counter(keys::kMemoryAllocatorAllocated);
  const model::CounterSeries* total = rank.counter(keys::kMemoryAllocatorTotal);
  if (reserved && allocated && total) {
    const double r = value_at(*reserved, fullest_ts), a = value_at(*allocated, fullest_ts);
    const double t = value_at(*total, fullest_ts), counted = t - all;
    // Sampled together, so each part is at least zero; a trace where one is not is not split (no part made up).
    if (r >= a && a >= counted && t >= r)
      return replace_rest(
          rest, out.rows,
          {{kMemoryCachedFree, r - a}, {kMemoryOtherAllocated, a - counted}, {kMemoryOutsideAllocator, t - r}});
  } else if (reserved && total && !allocated) {
    // The injection library's pair: what the program's allocator reserved holds every category and more.
    const double r = value_at(*reserved, fullest_ts), t = value_at(*total, fullest_ts);
    if (r >= t - all && t >= r)
      return replace_rest(rest, out.rows,
                          {{kMemoryAllocatorReservedRow, r - (t - all)}, {kMemoryOutsideAllocator, t - r}});
  }
  if (out.measured.events == 0) return;
  const model::AllocatorEvent* last = nullptr;
  for (const model::AllocatorEvent& a : rank.allocator) {  // by time
    if (a.ts_ns > fullest_ts) break;
    if (a.device == out.measured.device) last = &a;
  }
  if (!last || last->total_reserved < 0) return;
  const double cached = double(model::sat_sub(last->total_reserved, last->total_allocated));
  replace_rest(rest, out.rows, {{kMemoryCachedFree, cached}, {kMemoryOtherAllocated, all - cached}});
}
}  // namespace

RankMemory compare_memory(const model::Rank& rank) {
  using Code = MemoryNa::Code;
  RankMemory out;
  out.rank = rank.rank;
  out.config = config_from_run(rank.shape, rank.world_size, out.states_na);
  if (out.config) out.inputs = inputs_from_config(*out.config);
  else if (out.states_na.code == Code::NoRunConfig || out.states_na.code == Code::NoSharding) {
    // PyTorch's profiler, Nsight, an injected program's trace: the configuration as the trace shows it. Where
    // that fails too, a run_config without a strategy stays the reason.
    out.inputs = infer_memory_inputs(rank);
    MemoryNa inferred_na;
    out.config = config_from_inputs(out.inputs, inferred_na);
    if (out.config || out.states_na.code == Code::NoRunConfig) out.states_na = inferred_na;
  }
  if (auto ac = activation_config_from_run(rank.shape, out.activations_na)) out.activations = predict_activations(*ac);
  out.state_counters = any_measured_counter(rank);
  for (const char* c :
       {keys::kMemoryShardedParams, keys::kMemoryUnshardedParams, keys::kMemoryGradients, keys::kMemoryOptimizerState,
        keys::kMemoryHostOffloaded, keys::kMemoryActivations, keys::kMemoryAllocatorTotal}) {
    MemoryRow row;
    row.category = std::string(c).substr(7);  // without "memory."
    if (const model::CounterSeries* s = rank.counter(c)) row.measured = s->peak();
    if (!row.measured) row.measured_na = {Code::NoCounter};
    out.rows.push_back(row);
  }
  out.no_counters = std::none_of(out.rows.begin(), out.rows.end(), [](const MemoryRow& r) { return r.measured; });
  const int64_t fullest = split_total(rank, out);
  out.measured = measure_memory(rank);
  split_rest(rank, fullest, out);
  predict_rows(out);
  return out;
}

std::optional<ActivationCheck> check_activations(const RankMemory& m) {
  if (!m.activations) return std::nullopt;
  auto row = std::find_if(m.rows.begin(), m.rows.end(),
                          [](const MemoryRow& r) { return "memory." + r.category == keys::kMemoryActivations; });
  if (row == m.rows.end() || !row->measured || m.activations->bytes <= 0) return std::nullopt;
  ActivationCheck c;
  c.measured = *row->measured, c.predicted = m.activations->bytes;
  auto agrees = [&](double estimate) {
    return estimate > 0 && std::fabs(c.measured - estimate) <= kActivationAgreement * estimate;  // as shown: of it
  };
  c.within = agrees(c.predicted);
  if (c.within) return c;
  using Why = ActivationCheck::Why;
  const sizing::ActivationConfig& in = m.activations->inputs;
  sizing::ActivationConfig flip = in;
  flip.scores_kept = !in.scores_kept;
  if (const double b = sizing::predict_activations(flip).bytes; agrees(b))
    c.why = in.scores_kept ? Why::ScoresKept : Why::ScoresNotKept, c.alternative = b;
  flip = in;
  flip.checkpointing = !in.checkpointing;
  if (const double b = sizing::predict_activations(flip).bytes; c.why == Why::None && agrees(b))
    c.why = in.checkpointing ? Why::Checkpointing : Why::NoCheckpointing, c.alternative = b;
  if (c.why == Why::None) c.why = in.ffn_dim > 0 ? Why::Unexplained : Why::PaperLayer;
  return c;
}

bool is_rest_row(const std::string& category) {
  return category == kMemoryRest || category == kMemoryCachedFree || category == kMemoryOtherAllocated ||
         category == kMemoryOutsideAllocator || category == kMemoryAllocatorReservedRow;
}

void give_memory_inputs(RankMemory& m, const MemoryGiven& given) {
  if (!given.any()) return;
  const bool from_run = m.inputs.world_size.origin == InputOrigin::RunConfig && m.config;
  apply_given(m.inputs, given);
  if (from_run) {
    // run_config's units and prefetch stay; the flags change what they name.
    sizing::MemoryConfig& c = *m.config;
    if (given.params) c.params = *given.params, c.padded_params = 0;
    if (given.world_size) c.world = *given.world_size;
    if (given.sharding) c.stage = int(m.inputs.sharding.value);
    if (given.dtype) sizing::apply_dtype(c, m.inputs.dtype.text);
  } else {
    m.states_na = {};
    m.config = config_from_inputs(m.inputs, m.states_na);
  }
  predict_rows(m);
}

}  // namespace shardscope::metrics
