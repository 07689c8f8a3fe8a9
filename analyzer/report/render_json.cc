#include <fmt/format.h>

#include "analyzer/report/collectives_render.h"
#include "analyzer/report/memory_render.h"
#include "analyzer/report/render.h"
#include "analyzer/report/summary_render.h"
#include "analyzer/report/definitions.h"
#include "analyzer/report/sentences.h"
#include "model/saturating.h"
#include "analyzer/report/report_keys.h"
#include "tracer/format/keys.h"

namespace shardscope::report {
namespace k = report::report_keys;
namespace rk = report_keys;
using nlohmann::json;

namespace {

// A percentage, or null with its reason under "na".
void put_pct(json& o, const char* key, const std::optional<double>& v, const std::string& why) {
  if (v) {
    o[key] = std::round(*v * 1e4) / 1e4;
  } else {
    o[key] = nullptr;
    o[k::kNa][key] = why;
  }
}

json window(const metrics::WindowMetrics& m, const std::string& no_comm) {
  json o;
  o[k::kStepNs] = m.window_ns;
  o[k::kComputeNs] = m.compute_ns;
  o[k::kCommNs] = m.comm_ns;
  o[k::kOverlapNs] = m.overlap_ns;
  o[k::kExposedNs] = m.exposed_ns();
  o[k::kIdleNs] = m.idle_ns();
  put_pct(o, k::kOverlapPct, m.overlap_pct(), no_comm);
  put_pct(o, k::kCommFractionPct, m.comm_fraction_pct(), na_empty_window());
  put_pct(o, k::kExposedFractionPct, m.exposed_fraction_pct(), na_empty_window());
  put_pct(o, k::kIdlePct, m.idle_pct(), na_empty_window());
  put_pct(o, k::kComputePct, m.compute_pct(), na_empty_window());
  return o;
}

json optional_number(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

}  // namespace


// A lateness between ranks' clocks that reached the end of int64 (they lie that far apart): null, never the
// saturated number.
json ns_or_null(int64_t ns) { return ns == INT64_MAX ? json(nullptr) : json(ns); }

json render_json(const Report& r) {
  json out;
  out[k::kSchema] = k::kSchemaValue;
  out[k::kInputs] = r.inputs;
  out[k::kWarnings] = r.warnings;
  out[k::kNotes] = report_notes(r);
  out[k::kSummary] = summary_json(analysis::summarize_run(r));
  out[k::kDefinitions] = definitions_json();
  out[k::kRanks] = json::array();
  for (const RankReport& rr : r.ranks) {
    json o;
    o[k::kRank] = rr.rank;
    o[k::kSource] = rr.source;
    o[k::kFormat] = rr.format;
    o[k::kEvents] = rr.events;
    if (rr.whole) {
      json w;
      w[k::kWindowNs] = model::sat_mul(rr.whole->window_us, 1000);  // a hostile span may pass int64 in ns
      put_pct(w, k::kOverlapPct, rr.whole->overlap_pct(), na_overlap());
      w[k::kIdlePct] = std::round(rr.whole->idle_pct() * 1e4) / 1e4;
      w[k::kComputePct] = std::round(rr.whole->compute_pct() * 1e4) / 1e4;
      w[k::kNonComputePct] = std::round(rr.whole->non_compute_pct() * 1e4) / 1e4;
      w[rk::kHtaSetting] = metrics::kHtaSetting;
      w[rk::kLeftOutEvents] = rr.whole->left_out;
      o[k::kWholeTrace] = w;
    } else {
      o[k::kWholeTrace] = nullptr;
      o[k::kNa][k::kWholeTrace] = na_text(rr.whole_na);
    }
    o[k::kSteps] = json::array();
    for (const StepRow& s : rr.steps) {
      json so = window(s.m, "n/a: no communication in the step");
      so[k::kStep] = s.step.number;
      so[k::kStartNs] = s.step.start_ns;
      if (s.step.aborted) so[rk::kAborted] = true;
      o[k::kSteps].push_back(so);
    }
    if (rr.steps.empty()) {
      o[k::kAllSteps] = nullptr;
      o[k::kNa][k::kSteps] = na_text(rr.steps_na);
    } else {
      o[k::kAllSteps] = window(rr.all_steps, "n/a: no communication in any step");
      if (!rr.aborted_steps.empty()) o[rk::kAbortedSteps] = {{rk::kSteps, rr.aborted_steps}, {k::kReason, aborted_steps_sentence(rr.aborted_steps)}};
      const metrics::OutsideSteps& out_of = rr.outside;
      o[rk::kOutsideSteps] = {{rk::kFirstStep, out_of.first_step},
                              {rk::kLastStep, out_of.last_step},
                              {rk::kBeforeFirstStep, {{rk::kDeviceEvents, out_of.before_events}, {rk::kBusyNs, out_of.before_ns}}},
                              {rk::kAfterLastStep, {{rk::kDeviceEvents, out_of.after_events}, {rk::kBusyNs, out_of.after_ns}}}};
    }
    o[k::kCollectives] = json::array();
    for (const metrics::CollectiveStats& c : rr.collectives) {
      json co;
      co[k::kKind] = model::to_string(c.kind);
      co[k::kCount] = c.count;
      co[k::kTimeNs] = c.time_ns;
      co[k::kBytes] = c.sized_count ? json(c.bytes) : json(nullptr);
      co[k::kGroupSize] = c.group_size ? json(c.group_size) : json(nullptr);
      co[k::kAlgbwGbps] = optional_number(c.algbw_gbps());
      co[k::kBusbwGbps] = optional_number(c.busbw_gbps());
      co[rk::kSizedCount] = c.sized_count;
      if (c.link_ns) {  // the reduce timed these instances across ranks
        co[rk::kLinkNs] = *c.link_ns;
        co[rk::kWaitPct] = optional_number(c.wait_pct());
      }
      for (auto [key, why] : {std::pair(k::kBytes, na_text(c.bytes_na(), c.kind)), std::pair(k::kGroupSize, na_text(c.group_na(), c.kind)), std::pair(k::kAlgbwGbps, na_text(c.bandwidth_na(), c.kind)),
                              std::pair(k::kBusbwGbps, na_text(c.busbw_na(), c.kind))})
        if (!why.empty()) co[k::kNa][key] = why;
      o[k::kCollectives].push_back(co);
    }
    o[k::kTopDevice] = json::array();
    for (const KernelTime& kt : rr.top_device)
      o[k::kTopDevice].push_back({{k::kName, kt.name}, {k::kClass, model::to_string(kt.cls)}, {k::kCount, kt.count}, {k::kTimeNs, kt.time_ns}});
    o[k::kPrefetch] = prefetch_json(rr.prefetch);
    json m;
    m[k::kRows] = json::array();
    for (const metrics::MemoryRow& row : rr.memory.rows) {
      json ro = {{k::kCategory, row.category}, {k::kMeasuredBytes, optional_number(row.measured)}, {k::kPredictedBytes, optional_number(row.predicted)}};
      if (!row.measured) ro[k::kNa][k::kMeasuredBytes] = na_text(row.measured_na);
      if (!row.predicted) ro[k::kNa][k::kPredictedBytes] = na_text(row.predicted_na);
      m[k::kRows].push_back(ro);
    }
    if (rr.memory.config) m[rk::kMemoryCommand] = memory_command(*rr.memory.config);
    const std::string departs = departs_most(rr.memory), states = states_model(rr.memory);
    m[k::kDepartsMost] = departs.empty() ? json(nullptr) : json(departs);
    m[k::kStatesModel] = states.empty() ? json(nullptr) : json(states);
    m[k::kActivationsModel] = activations_model(rr.memory);
    if (const std::string why = memory_not_applicable(rr.memory); !why.empty()) m[k::kReason] = why;
    o[k::kMemory] = m;
    out[k::kRanks].push_back(o);
  }
  json s;
  if (r.stragglers.not_applicable != metrics::StragglersNa::None) s[k::kReason] = na_text(r.stragglers.not_applicable);
  s[k::kRanks] = json::array();
  for (const metrics::StragglerRank& sr : r.stragglers.ranks)
    s[k::kRanks].push_back({{k::kRank, sr.rank}, {k::kTimesLast, sr.times_last}, {k::kTotalLateByNs, ns_or_null(sr.total_late_by_ns)}, {k::kMaxLateByNs, ns_or_null(sr.max_late_by_ns)}});
  static constexpr const char* kPairings[] = {nullptr, "position", "sequence", "mixed"};
  const char* pairing = kPairings[size_t(r.stragglers.pairing)];
  s[rk::kPairing] = pairing ? json(pairing) : json(nullptr);
  s[k::kInstances] = json::array();
  for (const metrics::StragglerInstance& i : r.stragglers.instances)
    s[k::kInstances].push_back({{k::kKind, model::to_string(i.kind)}, {k::kOrdinal, i.ordinal}, {rk::kBySeq, i.by_seq}, {k::kLastRank, i.last_rank},
                                {k::kLateByNs, ns_or_null(i.late_by_ns)}, {k::kSpreadNs, ns_or_null(i.spread_ns)}});
  out[k::kStragglers] = s;
  out[rk::kLinks] = json::array();
  for (const metrics::LinkStats& l : r.links)
    out[rk::kLinks].push_back({{k::kKind, model::to_string(l.kind)}, {k::kInstances, l.instances}, {rk::kFastestNs, l.fastest_ns},
                               {k::kBytes, l.sized ? json(l.bytes) : json(nullptr)}, {rk::kSizedCount, l.sized},
                               {k::kAlgbwGbps, optional_number(l.algbw_gbps())}, {k::kBusbwGbps, optional_number(l.busbw_gbps())},
                               {k::kGroupSize, l.group_size ? json(l.group_size) : json(nullptr)}});
  return out;
}

}  // namespace shardscope::report
