#include <fmt/format.h>

#include "analyzer/report/render.h"
#include "analyzer/report/table.h"

namespace shardscope::report {
namespace {

std::string ms(int64_t ns) { return fmt::format("{:.3f}", double(ns) / 1e6); }
std::string pct(const std::optional<double>& v) { return v ? fmt::format("{:.2f}", *v) : "n/a"; }

std::vector<std::string> window_cells(const std::string& label, const metrics::WindowMetrics& m) {
  return {label, ms(m.window_ns), ms(m.compute_ns), ms(m.comm_ns), ms(m.overlap_ns), ms(m.exposed_ns()), pct(m.overlap_pct()),
          pct(m.comm_fraction_pct()), pct(m.exposed_fraction_pct()), ms(m.idle_ns())};
}

}  // namespace

std::string render_text(const Report& r, bool md) {
  std::string out;
  auto heading = [&](int level, const std::string& s) { out += md ? std::string(size_t(level), '#') + " " + s + "\n\n" : s + "\n"; };
  auto para = [&](const std::string& s) { out += md ? s + "\n\n" : "  " + s + "\n"; };
  auto table = [&](const Table& t) {
    out += t.render(md, "    ");
    if (md) out += "\n";
  };
  heading(1, fmt::format("shardscope report: {} rank(s) from {}", r.ranks.size(), fmt::join(r.inputs, ", ")));
  for (const std::string& w : r.warnings) para("warning: " + w);
  for (const std::string& n : r.notes) para("note: " + n);

  for (const RankReport& rr : r.ranks) {
    out += md ? "" : "\n";
    heading(2, fmt::format("rank {}: {} ({}, {} events, {} on the device timeline)", rr.rank, rr.source, rr.format, rr.events, rr.device_events));
    if (rr.whole) {
      const metrics::HtaBreakdown& w = *rr.whole;
      para(fmt::format("whole trace (HTA-compatible, first to last device event): window {:.3f} ms | overlap {} % | idle {:.2f} % | compute {:.2f} % | non-compute {:.2f} %",
                       double(w.window_us) / 1e3, pct_or(w.overlap_pct(), na_overlap()), w.idle_pct(), w.compute_pct(), w.non_compute_pct()));
    } else {
      para("whole trace: " + rr.whole_na);
    }
    if (rr.steps.empty()) {
      para("steps: " + rr.steps_na);
    } else {
      Table t{{"step", "time ms", "compute ms", "comm ms", "overlapped ms", "exposed ms", "overlap %", "comm %", "exposed %", "idle ms"}, {}, 1};
      for (const StepRow& s : rr.steps) t.rows.push_back(window_cells(std::to_string(s.step.number), s.m));
      t.rows.push_back(window_cells("all", rr.all_steps));
      para("per step (SPEC; n/a overlap = no communication in the step):");
      table(t);
    }
    if (rr.collectives.empty()) {
      para("collectives: n/a: no communication");
    } else {
      Table t{{"collective", "count", "MB", "time ms", "algbw GB/s", "busbw GB/s", "group"}, {}, 1};
      for (const metrics::CollectiveStats& c : rr.collectives)
        t.rows.push_back({std::string(model::to_string(c.kind)), std::to_string(c.count), c.sized_count ? fmt::format("{:.3f}", c.bytes / 1e6) : "n/a",
                          ms(c.time_ns), c.algbw_gbps() ? fmt::format("{:.2f}", *c.algbw_gbps()) : "n/a",
                          c.busbw_gbps() ? fmt::format("{:.2f}", *c.busbw_gbps()) : "n/a", c.group_size ? std::to_string(c.group_size) : "n/a"});
      para("collectives:");
      table(t);
    }
    if (!rr.top_device.empty()) {
      Table t{{"top device activity", "class", "count", "time ms"}, {}, 2};
      for (const KernelTime& k : rr.top_device) t.rows.push_back({k.name.size() > 90 ? k.name.substr(0, 87) + "..." : k.name, std::string(model::to_string(k.cls)), std::to_string(k.count), ms(k.time_ns)});
      para("device time by name:");
      table(t);
    }
    const metrics::RankPrefetch& p = rr.prefetch;
    para(fmt::format("backward prefetch (configured: {}): {}", p.configured.empty() ? "unknown" : p.configured, run_sentence(p)));
    if (p.na == metrics::NotApplicable::None) {
      if (!p.unit_identity.empty()) para("units: " + p.unit_identity);
      for (const metrics::StepPrefetch& s : p.steps) para(fmt::format("step {}: {}", s.step, step_sentence(s, p)));
    }
    const metrics::RankMemory& m = rr.memory;
    bool any = false;
    for (const metrics::MemoryRow& row : m.rows) any = any || row.measured || row.predicted;
    if (!any) {
      para("memory: " + m.not_applicable);
    } else {
      Table t{{"memory", "measured MB", "predicted MB"}, {}, 1};
      for (const metrics::MemoryRow& row : m.rows)
        t.rows.push_back({row.category, row.measured ? fmt::format("{:.3f}", *row.measured / 1e6) : "n/a",
                          row.predicted ? fmt::format("{:.3f}", *row.predicted / 1e6) : "n/a"});
      para("memory (peak per category vs the ZeRO model):");
      table(t);
      if (!m.states_model.empty()) para("model states: " + m.states_model);
      if (!m.activations_model.empty()) para("activations: " + m.activations_model);
      if (!m.departs_most.empty()) para("departs most: " + m.departs_most);
      if (!m.not_applicable.empty()) para(m.not_applicable);
    }
  }
  out += md ? "" : "\n";
  heading(2, "stragglers");
  if (!r.stragglers.not_applicable.empty()) {
    para(r.stragglers.not_applicable);
  } else {
    Table t{{"rank", "times last", "total late ms", "max late ms"}, {}, 1};
    for (const metrics::StragglerRank& s : r.stragglers.ranks)
      t.rows.push_back({std::to_string(s.rank), std::to_string(s.times_last), ms(s.total_late_by_ns), ms(s.max_late_by_ns)});
    para(fmt::format("{} collective instances matched across ranks; the last rank to arrive, and by how much it trailed the next-latest:", r.stragglers.instances.size()));
    table(t);
  }
  return out;
}

}  // namespace shardscope::report
