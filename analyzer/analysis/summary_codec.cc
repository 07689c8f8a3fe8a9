#include "analyzer/analysis/summary_codec.h"

#include <optional>

// std::optional as null or the value (nlohmann 3.11 has no serializer for it).
namespace nlohmann {
template <typename T>
struct adl_serializer<std::optional<T>> {
  static void to_json(json& j, const std::optional<T>& o) {
    if (o) j = *o;
    else
      j = nullptr;
  }
  static void from_json(const json& j, std::optional<T>& o) {
    if (j.is_null()) o.reset();
    else
      o = j.get<T>();
  }
};
}  // namespace nlohmann

// One line per struct: its fields, by name. A field added to a struct and not here is not carried: the
// round-trip test (tests/analyzer/summary_test.cc) compares the reports made both ways.
namespace shardscope::model {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Step, number, start_ns, end_ns, host_start_ns, host_end_ns, aborted)
}
namespace shardscope::sizing {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(MemoryNa, code, text, value, index)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(MemoryConfig, params, padded_params, world, stage, param_bytes, precision, offload,
                                   largest_unit_params, units_in_flight, root_unit_params)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ActivationConfig, seq_len, batch, hidden, heads, layers, bytes_per_element,
                                   checkpointing)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ActivationPrediction, bytes, inputs, scale)
}  // namespace shardscope::sizing
namespace shardscope::metrics {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(WindowMetrics, window_ns, compute_ns, comm_ns, overlap_ns, busy_ns)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(OutsideSteps, before_events, after_events, before_ns, after_ns, first_step,
                                   last_step)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(HtaBreakdown, window_us, busy_us, compute_us, comm_us, overlap_us, device_events,
                                   left_out)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(CollectiveStats, kind, count, time_ns, bytes, sized_count, sized_time_ns, bus_bytes,
                                   group_size, sized_without_group)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(EventRef, track, index)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(UnitPrefetch, unit, next_unit, compute, all_gather, next_compute, reduce_scatter,
                                   compute_start_ns, compute_end_ns, next_compute_start_ns, compute_issued_ns,
                                   issued_ns, ag_start_ns, ag_end_ns, issue_lead_ns, ag_ns, hidden_ns, exposed_wait_ns,
                                   queued_ns, serialized_behind_rs, throttled, throttled_from_ns, all_gather_ordinal,
                                   all_gather_group, all_gather_by_seq, all_gather_wall_ns, late_peer, late_peer_ns,
                                   cause)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(StepPrefetch, step, warm_up, aborted, units, verdict, na, na_count, cause,
                                   missing_pairs, ag_ns, hidden_ns, exposed_wait_ns)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RankPrefetch, rank, configured, limit, steps, na, unit_identity, forward_all_gathers,
                                   forward_throttled, verdict, steady_effective, steady_not_effective, steady_ag_ns,
                                   steady_hidden_ns)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(MemoryRow, category, measured, predicted, measured_na, predicted_na)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RankMemory, rank, rows, config, departs_most, all_agree, activations, activations_na,
                                   no_counters, states_na)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RankKey, rank, order)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(InstanceSize, dur_ns, bytes, group_size)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(InstanceId, kind, group, by_seq, n)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(KeyedArrival, id, wall_ns, size)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RankArrivals, key, clock_mapped, wall_start, size, keyed)
}  // namespace shardscope::metrics
namespace shardscope::plugins {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RankHeader, rank, world_size, source, run_config, wall_start, rank_given)
}  // namespace shardscope::plugins
namespace shardscope::report {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(StepRow, step, m)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(KernelTime, name, cls, count, time_ns)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RankReport, rank, source, format, events, device_events, whole, whole_na,
                                   trace_steps, steps, all_steps, aborted_steps, steps_na, outside, collectives,
                                   top_device, prefetch, memory)
}  // namespace shardscope::report

namespace shardscope::analysis {

nlohmann::json encode(const report::RankReport& rank) { return rank; }
report::RankReport decode_rank_report(const nlohmann::json& j) { return j.get<report::RankReport>(); }

nlohmann::json encode(const RankSummary& s) {
  return {{"report", s.report},
          {"arrivals", s.arrivals},
          {"header", s.header},
          {"warnings", s.warnings},
          {"trace_bytes", s.trace_bytes}};
}

RankSummary decode_summary(const nlohmann::json& j) {
  RankSummary s;
  s.report = j.at("report").get<report::RankReport>();
  s.arrivals = j.at("arrivals").get<metrics::RankArrivals>();
  s.header = j.at("header").get<plugins::RankHeader>();
  s.warnings = j.at("warnings").get<std::vector<std::string>>();
  s.trace_bytes = j.at("trace_bytes").get<uint64_t>();
  return s;
}

}  // namespace shardscope::analysis
