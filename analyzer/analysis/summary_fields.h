// Every result a summary carries, field by field (fields.h): one list per struct, by the name the summary
// record gives it. The codec (summary_codec.cc) encodes and decodes by these lists, and each list is checked
// against its struct at compile time, so a member added to a result and not here fails the build; the
// round-trip test (tests/summaries/summary_fields_test.cc) sets every listed field and reads it back from a
// summary file.
#pragma once

#include <optional>
#include <tuple>

#include <nlohmann/json.hpp>

#include "analyzer/analysis/fields.h"
#include "analyzer/analysis/report.h"
#include "analyzer/metrics/instances.h"
#include "plugins/load/load.h"

namespace shardscope::analysis {

template <>
struct Fields<model::Step> {
  static constexpr std::tuple list{
      field("number", &model::Step::number),           field("start_ns", &model::Step::start_ns),
      field("end_ns", &model::Step::end_ns),           field("host_start_ns", &model::Step::host_start_ns),
      field("host_end_ns", &model::Step::host_end_ns), field("aborted", &model::Step::aborted)};
};
static_assert(fields_cover_struct<model::Step>());

template <>
struct Fields<sizing::MemoryNa> {
  static constexpr std::tuple list{field("code", &sizing::MemoryNa::code), field("text", &sizing::MemoryNa::text),
                                   field("value", &sizing::MemoryNa::value), field("index", &sizing::MemoryNa::index)};
};
static_assert(fields_cover_struct<sizing::MemoryNa>());

template <>
struct Fields<sizing::MemoryConfig> {
  static constexpr std::tuple list{field("params", &sizing::MemoryConfig::params),
                                   field("padded_params", &sizing::MemoryConfig::padded_params),
                                   field("world", &sizing::MemoryConfig::world),
                                   field("stage", &sizing::MemoryConfig::stage),
                                   field("param_bytes", &sizing::MemoryConfig::param_bytes),
                                   field("precision", &sizing::MemoryConfig::precision),
                                   field("offload", &sizing::MemoryConfig::offload),
                                   field("largest_unit_params", &sizing::MemoryConfig::largest_unit_params),
                                   field("units_in_flight", &sizing::MemoryConfig::units_in_flight),
                                   field("root_unit_params", &sizing::MemoryConfig::root_unit_params)};
};
static_assert(fields_cover_struct<sizing::MemoryConfig>());

template <>
struct Fields<sizing::ActivationConfig> {
  static constexpr std::tuple list{field("seq_len", &sizing::ActivationConfig::seq_len),
                                   field("batch", &sizing::ActivationConfig::batch),
                                   field("hidden", &sizing::ActivationConfig::hidden),
                                   field("heads", &sizing::ActivationConfig::heads),
                                   field("layers", &sizing::ActivationConfig::layers),
                                   field("bytes_per_element", &sizing::ActivationConfig::bytes_per_element),
                                   field("checkpointing", &sizing::ActivationConfig::checkpointing),
                                   field("scores_kept", &sizing::ActivationConfig::scores_kept),
                                   field("ffn_dim", &sizing::ActivationConfig::ffn_dim)};
};
static_assert(fields_cover_struct<sizing::ActivationConfig>());

template <>
struct Fields<sizing::ActivationPrediction> {
  static constexpr std::tuple list{field("bytes", &sizing::ActivationPrediction::bytes),
                                   field("inputs", &sizing::ActivationPrediction::inputs),
                                   field("scale", &sizing::ActivationPrediction::scale)};
};
static_assert(fields_cover_struct<sizing::ActivationPrediction>());

template <>
struct Fields<metrics::WindowMetrics> {
  static constexpr std::tuple list{
      field("window_ns", &metrics::WindowMetrics::window_ns), field("compute_ns", &metrics::WindowMetrics::compute_ns),
      field("comm_ns", &metrics::WindowMetrics::comm_ns), field("overlap_ns", &metrics::WindowMetrics::overlap_ns),
      field("busy_ns", &metrics::WindowMetrics::busy_ns)};
};
static_assert(fields_cover_struct<metrics::WindowMetrics>());

template <>
struct Fields<metrics::OutsideSteps> {
  static constexpr std::tuple list{field("before_events", &metrics::OutsideSteps::before_events),
                                   field("after_events", &metrics::OutsideSteps::after_events),
                                   field("before_ns", &metrics::OutsideSteps::before_ns),
                                   field("after_ns", &metrics::OutsideSteps::after_ns),
                                   field("first_step", &metrics::OutsideSteps::first_step),
                                   field("last_step", &metrics::OutsideSteps::last_step)};
};
static_assert(fields_cover_struct<metrics::OutsideSteps>());

template <>
struct Fields<metrics::HtaBreakdown> {
  static constexpr std::tuple list{field("window_us", &metrics::HtaBreakdown::window_us),
                                   field("busy_us", &metrics::HtaBreakdown::busy_us),
                                   field("compute_us", &metrics::HtaBreakdown::compute_us),
                                   field("comm_us", &metrics::HtaBreakdown::comm_us),
                                   field("overlap_us", &metrics::HtaBreakdown::overlap_us),
                                   field("device_events", &metrics::HtaBreakdown::device_events),
                                   field("left_out", &metrics::HtaBreakdown::left_out),
                                   field("window_ns", &metrics::HtaBreakdown::window_ns),
                                   field("busy_ns", &metrics::HtaBreakdown::busy_ns),
                                   field("compute_ns", &metrics::HtaBreakdown::compute_ns),
                                   field("comm_ns", &metrics::HtaBreakdown::comm_ns),
                                   field("overlap_ns", &metrics::HtaBreakdown::overlap_ns)};
};
static_assert(fields_cover_struct<metrics::HtaBreakdown>());

template <>
struct Fields<metrics::CollectiveStats> {
  static constexpr std::tuple list{field("kind", &metrics::CollectiveStats::kind),
                                   field("count", &metrics::CollectiveStats::count),
                                   field("time_ns", &metrics::CollectiveStats::time_ns),
                                   field("bytes", &metrics::CollectiveStats::bytes),
                                   field("sized_count", &metrics::CollectiveStats::sized_count),
                                   field("sized_time_ns", &metrics::CollectiveStats::sized_time_ns),
                                   field("bus_bytes", &metrics::CollectiveStats::bus_bytes),
                                   field("group_size", &metrics::CollectiveStats::group_size),
                                   field("sized_without_group", &metrics::CollectiveStats::sized_without_group)};
  // Set by the reduce across ranks, after the summaries are read.
  static constexpr std::tuple not_carried{&metrics::CollectiveStats::link_ns};
};
static_assert(fields_cover_struct<metrics::CollectiveStats>());

template <>
struct Fields<metrics::EventRef> {
  static constexpr std::tuple list{field("track", &metrics::EventRef::track),
                                   field("index", &metrics::EventRef::index)};
};
static_assert(fields_cover_struct<metrics::EventRef>());

template <>
struct Fields<metrics::UnitPrefetch> {
  static constexpr std::tuple list{field("unit", &metrics::UnitPrefetch::unit),
                                   field("next_unit", &metrics::UnitPrefetch::next_unit),
                                   field("compute", &metrics::UnitPrefetch::compute),
                                   field("all_gather", &metrics::UnitPrefetch::all_gather),
                                   field("next_compute", &metrics::UnitPrefetch::next_compute),
                                   field("reduce_scatter", &metrics::UnitPrefetch::reduce_scatter),
                                   field("compute_start_ns", &metrics::UnitPrefetch::compute_start_ns),
                                   field("compute_end_ns", &metrics::UnitPrefetch::compute_end_ns),
                                   field("next_compute_start_ns", &metrics::UnitPrefetch::next_compute_start_ns),
                                   field("compute_issued_ns", &metrics::UnitPrefetch::compute_issued_ns),
                                   field("issued_ns", &metrics::UnitPrefetch::issued_ns),
                                   field("ag_start_ns", &metrics::UnitPrefetch::ag_start_ns),
                                   field("ag_end_ns", &metrics::UnitPrefetch::ag_end_ns),
                                   field("issue_lead_ns", &metrics::UnitPrefetch::issue_lead_ns),
                                   field("ag_ns", &metrics::UnitPrefetch::ag_ns),
                                   field("hidden_ns", &metrics::UnitPrefetch::hidden_ns),
                                   field("exposed_wait_ns", &metrics::UnitPrefetch::exposed_wait_ns),
                                   field("queued_ns", &metrics::UnitPrefetch::queued_ns),
                                   field("serialized_behind_rs", &metrics::UnitPrefetch::serialized_behind_rs),
                                   field("throttled", &metrics::UnitPrefetch::throttled),
                                   field("throttled_from_ns", &metrics::UnitPrefetch::throttled_from_ns),
                                   field("all_gather_ordinal", &metrics::UnitPrefetch::all_gather_ordinal),
                                   field("all_gather_group", &metrics::UnitPrefetch::all_gather_group),
                                   field("all_gather_by_seq", &metrics::UnitPrefetch::all_gather_by_seq),
                                   field("all_gather_wall_ns", &metrics::UnitPrefetch::all_gather_wall_ns),
                                   field("late_peer", &metrics::UnitPrefetch::late_peer),
                                   field("late_peer_ns", &metrics::UnitPrefetch::late_peer_ns),
                                   field("cause", &metrics::UnitPrefetch::cause)};
};
static_assert(fields_cover_struct<metrics::UnitPrefetch>());

template <>
struct Fields<metrics::StepPrefetch> {
  static constexpr std::tuple list{field("step", &metrics::StepPrefetch::step),
                                   field("warm_up", &metrics::StepPrefetch::warm_up),
                                   field("aborted", &metrics::StepPrefetch::aborted),
                                   field("units", &metrics::StepPrefetch::units),
                                   field("verdict", &metrics::StepPrefetch::verdict),
                                   field("na", &metrics::StepPrefetch::na),
                                   field("na_count", &metrics::StepPrefetch::na_count),
                                   field("cause", &metrics::StepPrefetch::cause),
                                   field("missing_pairs", &metrics::StepPrefetch::missing_pairs),
                                   field("ag_ns", &metrics::StepPrefetch::ag_ns),
                                   field("hidden_ns", &metrics::StepPrefetch::hidden_ns),
                                   field("exposed_wait_ns", &metrics::StepPrefetch::exposed_wait_ns)};
};
static_assert(fields_cover_struct<metrics::StepPrefetch>());

template <>
struct Fields<metrics::RankPrefetch> {
  static constexpr std::tuple list{field("rank", &metrics::RankPrefetch::rank),
                                   field("configured", &metrics::RankPrefetch::configured),
                                   field("limit", &metrics::RankPrefetch::limit),
                                   field("steps", &metrics::RankPrefetch::steps),
                                   field("na", &metrics::RankPrefetch::na),
                                   field("unit_identity", &metrics::RankPrefetch::unit_identity),
                                   field("forward_all_gathers", &metrics::RankPrefetch::forward_all_gathers),
                                   field("forward_throttled", &metrics::RankPrefetch::forward_throttled),
                                   field("verdict", &metrics::RankPrefetch::verdict),
                                   field("steady_effective", &metrics::RankPrefetch::steady_effective),
                                   field("steady_not_effective", &metrics::RankPrefetch::steady_not_effective),
                                   field("steady_ag_ns", &metrics::RankPrefetch::steady_ag_ns),
                                   field("steady_hidden_ns", &metrics::RankPrefetch::steady_hidden_ns)};
};
static_assert(fields_cover_struct<metrics::RankPrefetch>());

template <>
struct Fields<metrics::MemoryRow> {
  static constexpr std::tuple list{
      field("category", &metrics::MemoryRow::category),         field("measured", &metrics::MemoryRow::measured),
      field("predicted", &metrics::MemoryRow::predicted),       field("measured_na", &metrics::MemoryRow::measured_na),
      field("predicted_na", &metrics::MemoryRow::predicted_na), field("at_fullest", &metrics::MemoryRow::at_fullest)};
};
static_assert(fields_cover_struct<metrics::MemoryRow>());

template <>
struct Fields<metrics::MeasuredStep> {
  static constexpr std::tuple list{field("step", &metrics::MeasuredStep::step),
                                   field("peak_allocated", &metrics::MeasuredStep::peak_allocated),
                                   field("peak_reserved", &metrics::MeasuredStep::peak_reserved)};
};
static_assert(fields_cover_struct<metrics::MeasuredStep>());

template <>
struct Fields<metrics::MeasuredGroup> {
  static constexpr std::tuple list{field("made", &metrics::MeasuredGroup::made),
                                   field("bytes", &metrics::MeasuredGroup::bytes),
                                   field("allocations", &metrics::MeasuredGroup::allocations)};
};
static_assert(fields_cover_struct<metrics::MeasuredGroup>());

template <>
struct Fields<metrics::MeasuredMemory> {
  static constexpr std::tuple list{field("events", &metrics::MeasuredMemory::events),
                                   field("device", &metrics::MeasuredMemory::device),
                                   field("other_device_events", &metrics::MeasuredMemory::other_device_events),
                                   field("peak_allocated", &metrics::MeasuredMemory::peak_allocated),
                                   field("peak_reserved", &metrics::MeasuredMemory::peak_reserved),
                                   field("peak_ts_ns", &metrics::MeasuredMemory::peak_ts_ns),
                                   field("peak_in_step", &metrics::MeasuredMemory::peak_in_step),
                                   field("peak_step", &metrics::MeasuredMemory::peak_step),
                                   field("peak_again", &metrics::MeasuredMemory::peak_again),
                                   field("steps", &metrics::MeasuredMemory::steps),
                                   field("alive", &metrics::MeasuredMemory::alive),
                                   field("before_trace", &metrics::MeasuredMemory::before_trace),
                                   field("before_trace_left", &metrics::MeasuredMemory::before_trace_left),
                                   field("chain_breaks", &metrics::MeasuredMemory::chain_breaks),
                                   field("backward_seen", &metrics::MeasuredMemory::backward_seen)};
};
static_assert(fields_cover_struct<metrics::MeasuredMemory>());

template <>
struct Fields<metrics::MemoryInput> {
  static constexpr std::tuple list{
      field("origin", &metrics::MemoryInput::origin), field("basis", &metrics::MemoryInput::basis),
      field("na", &metrics::MemoryInput::na),         field("value", &metrics::MemoryInput::value),
      field("text", &metrics::MemoryInput::text),     field("events", &metrics::MemoryInput::events),
      field("step", &metrics::MemoryInput::step),     field("at", &metrics::MemoryInput::at)};
};
static_assert(fields_cover_struct<metrics::MemoryInput>());

template <>
struct Fields<metrics::MemoryInputs> {
  static constexpr std::tuple list{field("world_size", &metrics::MemoryInputs::world_size),
                                   field("sharding", &metrics::MemoryInputs::sharding),
                                   field("params", &metrics::MemoryInputs::params),
                                   field("dtype", &metrics::MemoryInputs::dtype),
                                   field("optimizer", &metrics::MemoryInputs::optimizer),
                                   field("units", &metrics::MemoryInputs::units),
                                   field("largest_unit", &metrics::MemoryInputs::largest_unit),
                                   field("root_unit", &metrics::MemoryInputs::root_unit),
                                   field("group_size", &metrics::MemoryInputs::group_size)};
};
static_assert(fields_cover_struct<metrics::MemoryInputs>());

template <>
struct Fields<metrics::RankMemory> {
  static constexpr std::tuple list{field("rank", &metrics::RankMemory::rank),
                                   field("rows", &metrics::RankMemory::rows),
                                   field("config", &metrics::RankMemory::config),
                                   field("departs_most", &metrics::RankMemory::departs_most),
                                   field("all_agree", &metrics::RankMemory::all_agree),
                                   field("activations", &metrics::RankMemory::activations),
                                   field("activations_na", &metrics::RankMemory::activations_na),
                                   field("no_counters", &metrics::RankMemory::no_counters),
                                   field("states_na", &metrics::RankMemory::states_na),
                                   field("measured", &metrics::RankMemory::measured),
                                   field("inputs", &metrics::RankMemory::inputs),
                                   field("state_counters", &metrics::RankMemory::state_counters)};
};
static_assert(fields_cover_struct<metrics::RankMemory>());

template <>
struct Fields<metrics::RankKey> {
  static constexpr std::tuple list{field("rank", &metrics::RankKey::rank), field("order", &metrics::RankKey::order)};
};
static_assert(fields_cover_struct<metrics::RankKey>());

template <>
struct Fields<metrics::InstanceSize> {
  static constexpr std::tuple list{field("dur_ns", &metrics::InstanceSize::dur_ns),
                                   field("bytes", &metrics::InstanceSize::bytes),
                                   field("group_size", &metrics::InstanceSize::group_size)};
};
static_assert(fields_cover_struct<metrics::InstanceSize>());

template <>
struct Fields<metrics::InstanceId> {
  static constexpr std::tuple list{field("kind", &metrics::InstanceId::kind),
                                   field("group", &metrics::InstanceId::group),
                                   field("by_seq", &metrics::InstanceId::by_seq), field("n", &metrics::InstanceId::n)};
};
static_assert(fields_cover_struct<metrics::InstanceId>());

template <>
struct Fields<metrics::KeyedArrival> {
  static constexpr std::tuple list{field("id", &metrics::KeyedArrival::id),
                                   field("wall_ns", &metrics::KeyedArrival::wall_ns),
                                   field("size", &metrics::KeyedArrival::size)};
};
static_assert(fields_cover_struct<metrics::KeyedArrival>());

template <>
struct Fields<metrics::RankArrivals> {
  static constexpr std::tuple list{
      field("key", &metrics::RankArrivals::key), field("clock_mapped", &metrics::RankArrivals::clock_mapped),
      field("wall_start", &metrics::RankArrivals::wall_start), field("size", &metrics::RankArrivals::size),
      field("keyed", &metrics::RankArrivals::keyed)};
};
static_assert(fields_cover_struct<metrics::RankArrivals>());

template <>
struct Fields<plugins::RankHeader> {
  static constexpr std::tuple list{field("rank", &plugins::RankHeader::rank),
                                   field("world_size", &plugins::RankHeader::world_size),
                                   field("source", &plugins::RankHeader::source),
                                   field("file", &plugins::RankHeader::file),
                                   field("run_config", &plugins::RankHeader::run_config),
                                   field("wall_start", &plugins::RankHeader::wall_start),
                                   field("rank_given", &plugins::RankHeader::rank_given),
                                   field("distributed", &plugins::RankHeader::distributed)};
};
static_assert(fields_cover_struct<plugins::RankHeader>());

template <>
struct Fields<report::StepRow> {
  static constexpr std::tuple list{field("step", &report::StepRow::step), field("m", &report::StepRow::m)};
};
static_assert(fields_cover_struct<report::StepRow>());

template <>
struct Fields<report::KernelTime> {
  static constexpr std::tuple list{field("name", &report::KernelTime::name), field("cls", &report::KernelTime::cls),
                                   field("count", &report::KernelTime::count),
                                   field("time_ns", &report::KernelTime::time_ns),
                                   field("coll", &report::KernelTime::coll)};
};
static_assert(fields_cover_struct<report::KernelTime>());

template <>
struct Fields<report::RankReport> {
  static constexpr std::tuple list{field("rank", &report::RankReport::rank),
                                   field("source", &report::RankReport::source),
                                   field("format", &report::RankReport::format),
                                   field("events", &report::RankReport::events),
                                   field("device_events", &report::RankReport::device_events),
                                   field("whole", &report::RankReport::whole),
                                   field("whole_na", &report::RankReport::whole_na),
                                   field("trace_steps", &report::RankReport::trace_steps),
                                   field("steps", &report::RankReport::steps),
                                   field("all_steps", &report::RankReport::all_steps),
                                   field("aborted_steps", &report::RankReport::aborted_steps),
                                   field("steps_na", &report::RankReport::steps_na),
                                   field("step_rule", &report::RankReport::step_rule),
                                   field("outside", &report::RankReport::outside),
                                   field("collectives", &report::RankReport::collectives),
                                   field("top_device", &report::RankReport::top_device),
                                   field("prefetch", &report::RankReport::prefetch),
                                   field("memory", &report::RankReport::memory)};
};
static_assert(fields_cover_struct<report::RankReport>());

}  // namespace shardscope::analysis

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

// Each listed result (above) as an object of its fields, by name; a field missing from the
// object, or of the wrong type, throws.
template <typename T>
requires shardscope::analysis::Described<T>
struct adl_serializer<T, void> {
  static void to_json(json& j, const T& v) {
    j = json::object();
    shardscope::analysis::for_each_field<T>([&](const auto& f) { j[f.name] = v.*f.member; });
  }
  static void from_json(const json& j, T& v) {
    shardscope::analysis::for_each_field<T>([&](const auto& f) { j.at(f.name).get_to(v.*f.member); });
  }
};
}  // namespace nlohmann
