#include <fmt/format.h>

#include "analyzer/report/collectives_render.h"
#include "analyzer/report/memory_render.h"
#include "analyzer/report/render.h"
#include "tracer/format/printable.h"
#include "analyzer/report/sentences.h"
#include "analyzer/report/table.h"
#include "analyzer/report/definitions.h"
#include "analyzer/report/summary_render.h"
#include "analyzer/analysis/run_summary.h"

#include <algorithm>
#include <span>

namespace shardscope::report {
namespace {

std::string ms(int64_t ns) { return fmt::format("{:.3f}", double(ns) / 1e6); }
// Lateness compares ranks' clocks, which may lie far apart: a sum that reached the end of int64 is said so.
std::string late_ms(int64_t ns) { return ns == INT64_MAX ? "over 2^63 ns" : ms(ns); }
// The value, or "" for NaNotes to fill in with "n/a" and its reason.
std::string num(const std::optional<double>& v) { return v ? fmt::format("{:.2f}", *v) : ""; }

std::vector<std::string> window_cells(const std::string& label, const std::string& row, const metrics::WindowMetrics& m, NaNotes& na) {
  const std::string in_step = row == "all steps" ? "n/a: no communication in any step" : "n/a: no communication in the step";
  return {label, ms(m.window_ns), ms(m.compute_ns), ms(m.comm_ns), ms(m.overlap_ns), ms(m.exposed_ns()),
          na.value_or(num(m.overlap_pct()), row, "overlap %", in_step), na.value_or(num(m.comm_fraction_pct()), row, "comm %", na_empty_window()),
          na.value_or(num(m.exposed_fraction_pct()), row, "exposed %", na_empty_window()), ms(m.idle_ns())};
}

}  // namespace

std::string render_text(const Report& r, bool md, const Selection& sel) {
  const analysis::RunSummary summary = analysis::summarize_run(r);
  const std::vector<int> shown = selected_ranks(r, sel);
  std::string out;
  // Each heading and paragraph is one line: a line break (or any control) that a file or event name brings
  // into one is shown, not obeyed.
  auto heading = [&](int level, const std::string& raw) {
    const std::string s = trace::printable(raw);
    out += md ? std::string(size_t(level), '#') + " " + s + "\n\n" : s + "\n";
  };
  auto para = [&](const std::string& raw) {
    const std::string s = trace::printable(raw);
    out += md ? s + "\n\n" : "  " + s + "\n";
  };
  auto table = [&](const Table& t, const NaNotes& na = {}) {
    out += t.render(md, "    ");
    if (md) out += "\n";
    for (const std::string& l : na.lines()) out += md ? l + "\n\n" : "    " + l + "\n";
  };
  heading(1, fmt::format("shardscope report: {} rank(s) from {}", r.ranks.size(), fmt::join(r.inputs, ", ")));
  for (const std::string& l : summary_lines(summary)) out += md ? "- " + trace::printable(l) + "\n" : "  " + trace::printable(l) + "\n";
  if (md) out += "\n";
  for (const std::string& w : r.warnings) para("warning: " + w);
  for (const std::string& n : report_notes(r)) para("note: " + n);
  if (shown.size() < r.ranks.size())
    para(fmt::format("details below: rank{} {} ({}); --ranks all, worst:N or a list for others, --format json for everything",
                     shown.size() == 1 ? "" : "s", analysis::rank_ranges(shown),
                     sel.ranks == Selection::Ranks::Worst ? "the most exposed communication" : "as selected"));

  for (const RankReport& rr : r.ranks) {
    if (!std::binary_search(shown.begin(), shown.end(), rr.rank)) continue;
    out += md ? "" : "\n";
    heading(2, fmt::format("rank {}: {} ({}, {} events, {} on the device timeline)", rr.rank, trace::printable(rr.source), rr.format, rr.events, rr.device_events));
    const std::vector<int64_t> steps = selected_steps(rr, sel);
    auto steps_shown = [&](int64_t step) { return std::binary_search(steps.begin(), steps.end(), step); };
    const std::string left_out = steps_left_out(rr, steps, sel);
    if (rr.whole) {
      const metrics::HtaBreakdown& w = *rr.whole;
      para(fmt::format("whole trace ({}): window {:.3f} ms | overlap {} | idle {:.2f} % | compute {:.2f} % | non-compute {:.2f} %", whole_trace_setting(w),
                       double(w.window_us) / 1e3, pct_or(w.overlap_pct(), na_overlap()), w.idle_pct(), w.compute_pct(), w.non_compute_pct()));
    } else {
      para("whole trace: " + na_text(rr.whole_na));
    }
    if (rr.steps.empty()) {
      para("steps: " + na_text(rr.steps_na));
    } else {
      Table t{{"step", "time ms", "compute ms", "comm ms", "overlapped ms", "exposed ms", "overlap %", "comm %", "exposed %", "idle ms"}, {}, 1};
      NaNotes na;
      for (const StepRow& s : rr.steps)
        if (steps_shown(s.step.number)) t.rows.push_back(window_cells(step_label(s.step), fmt::format("step {}", s.step.number), s.m, na));
      t.rows.push_back(window_cells("all", "all steps", rr.all_steps, na));
      para(left_out.empty() ? std::string("per step:") : "per step (" + left_out + "):");
      table(t, na);
      out += legend(t.header, md ? "" : "    ") + (md ? "\n" : "");
      if (std::string a = aborted_steps_sentence(rr.aborted_steps); !a.empty()) para(a);
      if (std::string o = outside_steps_sentence(rr.outside); !o.empty()) para(o);
    }
    if (rr.collectives.empty()) {
      para("collectives: n/a: no communication");
    } else {
      // The wait column where the reduce timed instances across ranks (two or more ranks of one run).
      const bool waits = std::any_of(rr.collectives.begin(), rr.collectives.end(), [](const metrics::CollectiveStats& c) { return c.link_ns.has_value(); });
      Table t{{"collective", "count", "MB (1e6 B)", "time ms", "algbw GB/s (1e9 B/s)", "busbw GB/s (1e9 B/s)", "group"}, {}, 1};
      if (waits) t.header.push_back("wait %");
      NaNotes na;
      for (const metrics::CollectiveStats& c : rr.collectives) {
        const std::string kind(model::to_string(c.kind));
        t.rows.push_back({kind, std::to_string(c.count), na.value_or(c.sized_count ? fmt::format("{:.3f}", c.bytes / 1e6) : "", kind, "MB (1e6 B)", na_text(c.bytes_na(), c.kind)),
                          ms(c.time_ns), na.value_or(num(c.algbw_gbps()), kind, "algbw GB/s (1e9 B/s)", na_text(c.bandwidth_na(), c.kind)),
                          na.value_or(num(c.busbw_gbps()), kind, "busbw GB/s (1e9 B/s)", na_text(c.busbw_na(), c.kind)),
                          na.value_or(c.group_size ? std::to_string(c.group_size) : "", kind, "group", na_text(c.group_na(), c.kind))});
        if (waits) t.rows.back().push_back(na.value_or(num(c.wait_pct()), kind, "wait %", wait_na_text()));
      }
      para("collectives:");
      table(t, na);
      out += legend(t.header, md ? "" : "    ") + (md ? "\n" : "");
      for (const metrics::CollectiveStats& c : rr.collectives)
        if (std::string s = partly_sized_text(c); !s.empty()) para(fmt::format("{}: {}", model::to_string(c.kind), s));
    }
    if (!rr.top_device.empty()) {
      Table t{{"top device activity", "class", "count", "time ms"}, {}, 2};
      const size_t n = sel.bounded ? std::min(sel.max_top_device, rr.top_device.size()) : rr.top_device.size();
      for (const KernelTime& k : std::span(rr.top_device).first(n)) t.rows.push_back({k.name.size() > 90 ? k.name.substr(0, 87) + "..." : k.name, std::string(model::to_string(k.cls)), std::to_string(k.count), ms(k.time_ns)});
      // Bounded, what was left out is said on the legend's line, not a line of its own.
      if (n == rr.top_device.size()) para("device time by name:");
      table(t);
      std::string l = legend(t.header, md ? "" : "    ");
      if (n < rr.top_device.size())
        l.replace(l.find("legend: "), 8, fmt::format("device time by name, the {} longest of {} (--steps all for all); legend: ", n, rr.top_device.size()));
      if (!l.empty()) out += l + (md ? "\n" : "");
    }
    const metrics::RankPrefetch& p = rr.prefetch;
    para(fmt::format("backward prefetch (configured: {}): {}", p.configured.empty() ? "unknown" : p.configured, run_sentence(p)));
    if (p.na == metrics::NotApplicable::None) {
      if (p.unit_identity != model::UnitIdentity::Named) para("units: " + unit_identity_sentence(p.unit_identity));
      for (const metrics::StepPrefetch& s : p.steps)
        if (steps_shown(s.step)) para(fmt::format("step {}: {}", s.step, step_sentence(s, p)));
    }
    const metrics::RankMemory& m = rr.memory;
    bool any = false;
    for (const metrics::MemoryRow& row : m.rows) any = any || row.measured || row.predicted;
    if (!any) {
      para("memory: " + memory_not_applicable(m));
    } else {
      Table t{{"memory", "measured MB", "predicted MB"}, {}, 1};
      NaNotes na;
      for (const metrics::MemoryRow& row : m.rows)
        t.rows.push_back({row.category, na.value_or(row.measured ? fmt::format("{:.3f}", *row.measured / 1e6) : "", row.category, "measured MB", na_text(row.measured_na)),
                          na.value_or(row.predicted ? fmt::format("{:.3f}", *row.predicted / 1e6) : "", row.category, "predicted MB", na_text(row.predicted_na))});
      para("memory (peak per category vs the ZeRO model):");
      table(t, na);
      out += legend(t.header, md ? "" : "    ") + (md ? "\n" : "");
      // How the model predicted: detail, shown beside every selection but the default.
      if (const std::string s = states_model(m); !s.empty() && !sel.is_default()) para("model states: " + s);
      if (m.activations) para("activations: " + activations_how(*m.activations));
      if (const std::string d = departs_most(m); !d.empty()) para("departs most: " + d);
      if (const std::string why = memory_not_applicable(m); !why.empty()) para(why);
    }
  }
  out += md ? "" : "\n";
  heading(2, "stragglers");
  if (r.stragglers.not_applicable != metrics::StragglersNa::None) {
    para(na_text(r.stragglers.not_applicable));
  } else {
    Table t{{"rank", "times last", "total late ms", "max late ms"}, {}, 1};
    for (const metrics::StragglerRank& s : r.stragglers.ranks)
      if (std::binary_search(shown.begin(), shown.end(), s.rank) || (summary.straggler && summary.straggler->rank == s.rank))
        t.rows.push_back({std::to_string(s.rank), std::to_string(s.times_last), late_ms(s.total_late_by_ns), late_ms(s.max_late_by_ns)});
    para(fmt::format("{} collective instances matched across ranks {}; the last rank to arrive, and by how much it trailed the next-latest{}:",
                     r.stragglers.instances.size(), pairing_text(r.stragglers.pairing), t.rows.size() < r.stragglers.ranks.size() ? " (the ranks shown and the straggler; --ranks all for every rank)" : ""));
    table(t);
    out += legend(t.header, md ? "" : "    ") + (md ? "\n" : "");
  }
  if (!r.links.empty() && !sel.is_default()) {  // the default view has the summary's links line
    // The link apart from the skew: each instance timed by the rank that waited least for its peers.
    Table t{{"link", "instances", "MB (1e6 B)", "fastest ms", "algbw GB/s (1e9 B/s)", "busbw GB/s (1e9 B/s)", "group"}, {}, 1};
    NaNotes na;
    for (const metrics::LinkStats& l : r.links) {
      const std::string kind(model::to_string(l.kind));
      t.rows.push_back({kind, std::to_string(l.instances), na.value_or(l.sized ? fmt::format("{:.3f}", l.bytes / 1e6) : "", kind, "MB (1e6 B)", na_text(metrics::CollectiveNa::NoMessageSize, l.kind)),
                        ms(l.fastest_ns), na.value_or(num(l.algbw_gbps()), kind, "algbw GB/s (1e9 B/s)", na_text(metrics::CollectiveNa::NoMessageSize, l.kind)),
                        na.value_or(num(l.busbw_gbps()), kind, "busbw GB/s (1e9 B/s)", na_text(l.sized ? metrics::CollectiveNa::NoGroupSizeForBusbw : metrics::CollectiveNa::NoMessageSize, l.kind)),
                        na.value_or(l.group_size ? std::to_string(l.group_size) : "", kind, "group", na_text(metrics::CollectiveNa::NoGroupSize, l.kind))});
    }
    out += md ? "" : "\n";
    heading(2, "links: each collective instance timed by its fastest rank");
    table(t, na);
    out += legend(t.header, md ? "" : "    ") + (md ? "\n" : "");
  }
  return out;
}

}  // namespace shardscope::report
