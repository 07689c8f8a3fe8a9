#include <algorithm>

#include <fmt/format.h>

#include "analyzer/report/collectives_render.h"
#include "analyzer/report/memory_render.h"
#include "analyzer/report/render.h"
#include "tracer/format/printable.h"
#include "analyzer/report/summary_render.h"
#include "analyzer/report/definitions.h"
#include "analyzer/report/sentences.h"
#include "analyzer/report/table.h"
#include "model/saturating.h"

namespace shardscope::report {
namespace {

struct Segment {
  const char* label;
  const char* color;
  int64_t ns;
};

// SPEC's split of a window: compute not overlapped, communication hidden under compute, exposed
// communication, other device work (memory, sync), idle. The five add up to the window.
std::vector<Segment> segments(const metrics::WindowMetrics& m) {
  int64_t other = std::max<int64_t>(0, model::sat_sub(model::sat_sub(m.busy_ns, m.compute_ns), m.exposed_ns()));
  return {{"compute", "#4e79a7", m.compute_ns - m.overlap_ns},
          {"overlapped comm", "#59a14f", m.overlap_ns},
          {"exposed comm", "#e15759", m.exposed_ns()},
          {"other device", "#b07aa1", other},
          {"idle", "#d3d3d3", m.idle_ns()}};
}

// The whole-trace breakdown as a window, for ranks without steps. Saturating: µs near the int64 bounds
// (a hostile file's) do not fit as ns.
metrics::WindowMetrics from_whole(const metrics::HtaBreakdown& w) {
  metrics::WindowMetrics m;
  m.window_ns = model::sat_mul(w.window_us, 1000);
  m.compute_ns = model::sat_mul(w.compute_us, 1000);
  m.comm_ns = model::sat_mul(w.comm_us, 1000);
  m.overlap_ns = model::sat_mul(w.overlap_us, 1000);
  m.busy_ns = model::sat_mul(w.busy_us, 1000);
  return m;
}

std::string stacked_bar(const metrics::WindowMetrics& m, double x, double y, double width, double height) {
  std::string s;
  if (m.window_ns <= 0) return s;
  double at = x;
  for (const Segment& seg : segments(m)) {
    double w = width * double(seg.ns) / double(m.window_ns);
    if (w <= 0) continue;
    s += fmt::format("<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" fill=\"{}\"><title>{}: {:.3f} ms ({:.1f}%)</title></rect>", at, y, w, height,
                     seg.color, seg.label, seg.ns / 1e6, 100.0 * double(seg.ns) / double(m.window_ns));
    at += w;
  }
  return s;
}

std::string legend() {
  std::string s = "<p class=\"legend\">";
  for (const Segment& seg : segments({}))
    s += fmt::format("<span><svg width=\"12\" height=\"12\"><rect width=\"12\" height=\"12\" fill=\"{}\"/></svg> {}</span> ", seg.color, seg.label);
  return s + "</p>";
}

// A name from a trace in a table cell: at most kCellBytes shown, the whole name (to kTitleBytes) in its
// tooltip, so a megabyte-long kernel name neither stretches the page nor bloats the file.
constexpr size_t kCellBytes = 160, kTitleBytes = 1000;
std::string name_cell(const std::string& s, const char* cls, bool title_always = false) {
  const bool clipped = s.size() > kCellBytes;
  std::string open = fmt::format("<td{}", *cls ? fmt::format(" class=\"{}\"", cls) : "");
  if (clipped || title_always) open += " title=\"" + html_escape(trace::printable(s, kTitleBytes)) + "\"";
  return open + ">" + html_escape(clipped ? trace::printable(s, kCellBytes) : s) + "</td>";
}
std::string td(const std::string& s, bool num = false) { return name_cell(s, num ? "n" : ""); }
std::string ms(int64_t ns) { return fmt::format("{:.3f}", double(ns) / 1e6); }
// The value, or "" for NaNotes to fill in with "n/a" and its reason.
std::string num(const std::optional<double>& v) { return v ? fmt::format("{:.2f}", *v) : ""; }
std::string na_lines(const NaNotes& na) {
  std::string s;
  for (const std::string& l : na.lines()) s += "<p class=\"na\">" + html_escape(l) + "</p>\n";
  return s;
}

}  // namespace

std::string html_escape(std::string_view in) {
  std::string o;
  o.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      // A line break or tab in a name would show as a space: shown as \n and \t, as the text report does.
      case '\n': o += "\\n"; break;
      case '\t': o += "\\t"; break;
      // A control character from a trace (a terminal escape in a name) is shown as a code, not passed on;
      // so is a C1 control (U+0080 to U+009F, UTF-8 C2 80 to C2 9F), U+0085 a line break to some readers.
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) o += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
        else if (static_cast<unsigned char>(c) == 0xc2 && i + 1 < in.size() && static_cast<unsigned char>(in[i + 1]) >= 0x80 &&
                 static_cast<unsigned char>(in[i + 1]) <= 0x9f)
          o += fmt::format("\\u{:04x}", static_cast<unsigned char>(in[++i]));
        else o += c;
    }
  }
  return o;
}

std::string render_html(const Report& r) {
  std::string h = R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>shardscope report</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:2px 8px}td.n{text-align:right;font-variant-numeric:tabular-nums}
th{background:#f3f3f3}.legend span{margin-right:1.2em}.na{color:#555;font-size:90%}.warn{color:#a15c00}.bad{color:#b00020;font-weight:bold}.good{color:#1b7f3b;font-weight:bold}
ul.summary{background:#f7f7f7;border:1px solid #ddd;padding:.8em 2em;max-width:70em}ul.summary li{margin:.2em 0}
details>summary{cursor:pointer;font-weight:bold;margin:.6em 0}td.name{max-width:36em;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
</style></head><body>
)";
  h += fmt::format("<h1>shardscope report</h1><p>{} rank(s) from {}</p>\n", r.ranks.size(), html_escape(fmt::format("{}", fmt::join(r.inputs, ", "))));
  h += "<ul class=\"summary\">\n";
  const analysis::RunSummary summary = analysis::summarize_run(r);
  for (const std::string& l : summary_lines(summary)) {
    // The prefetch verdict in colour: the line a reader looks for first.
    const bool prefetch = l.rfind("backward prefetch:", 0) == 0;
    const char* cls = !prefetch ? "" : summary.prefetch == metrics::Verdict::Effective ? " class=\"good\"" : summary.prefetch == metrics::Verdict::NotEffective ? " class=\"bad\"" : "";
    h += fmt::format("<li{}>{}</li>\n", cls, html_escape(l));
  }
  h += "</ul>\n";
  for (const std::string& w : r.warnings) h += "<p class=\"warn\">warning: " + html_escape(w) + "</p>\n";
  for (const std::string& n : report_notes(r)) h += "<p class=\"warn\">note: " + html_escape(n) + "</p>\n";

  // Per-rank stacked bars.
  h += "<h2>Where the time goes, per rank</h2>\n" + legend();
  const double W = 720, bar = 22, gap = 8, label = 90;
  h += fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" role=\"img\">", label + W + 10, (bar + gap) * double(r.ranks.size()) + 10);
  for (size_t i = 0; i < r.ranks.size(); ++i) {
    const RankReport& rr = r.ranks[i];
    double y = 5 + double(i) * (bar + gap);
    h += fmt::format("<text x=\"0\" y=\"{:.1f}\" font-size=\"13\">rank {}</text>", y + bar * 0.7, rr.rank);
    if (!rr.steps.empty()) h += stacked_bar(rr.all_steps, label, y, W, bar);
    else if (rr.whole) h += stacked_bar(from_whole(*rr.whole), label, y, W, bar);
    else h += fmt::format("<text x=\"{}\" y=\"{:.1f}\" font-size=\"12\">{}</text>", label, y + bar * 0.7, html_escape(na_text(rr.whole_na)));
  }
  h += "</svg>\n";

  // Each rank's details folded; the worst rank's (the most exposed communication) open.
  for (const RankReport& rr : r.ranks) {
    h += fmt::format("<details{}><summary>Rank {}{}</summary><p>{} ({}, {} events, {} on the device timeline)</p>\n", rr.rank == summary.worst_rank ? " open" : "",
                     rr.rank, rr.rank == summary.worst_rank && r.ranks.size() > 1 ? " (the most exposed communication)" : "", html_escape(rr.source),
                     html_escape(rr.format), rr.events, rr.device_events);
    if (rr.whole)
      h += fmt::format("<p>Whole trace ({}): window {:.3f} ms, overlap {}, idle {:.2f} %, compute {:.2f} %, non-compute {:.2f} %</p>\n",
                       html_escape(whole_trace_setting(*rr.whole)), rr.whole->window_us / 1e3, html_escape(pct_or(rr.whole->overlap_pct(), na_overlap())),
                       rr.whole->idle_pct(), rr.whole->compute_pct(), rr.whole->non_compute_pct());
    else
      h += "<p>Whole trace: " + html_escape(na_text(rr.whole_na)) + "</p>\n";
    if (rr.steps.empty()) {
      h += "<p>Steps: " + html_escape(na_text(rr.steps_na)) + "</p>\n";
    } else {
      // The per-step strip: one stacked bar per step, widths proportional to step time.
      int64_t total = std::max<int64_t>(1, rr.all_steps.window_ns);
      h += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"730\" height=\"44\" role=\"img\">";
      double x = 0;
      for (const StepRow& s : rr.steps) {
        double w = 720.0 * double(s.m.window_ns) / double(total);
        h += stacked_bar(s.m, x, 4, std::max(0.0, w - 2), 24);
        h += fmt::format("<text x=\"{:.1f}\" y=\"42\" font-size=\"10\">{}</text>", x, s.step.number);
        x += w;
      }
      h += "</svg>\n<table><tr><th>step</th><th>time ms</th><th>compute ms</th><th>comm ms</th><th>overlapped ms</th><th>exposed ms</th><th>overlap %</th><th>comm %</th><th>exposed %</th><th>idle ms</th></tr>\n";
      NaNotes na;
      auto row = [&](const std::string& label, const std::string& name, const metrics::WindowMetrics& m) {
        const std::string in_step = name == "all steps" ? "n/a: no communication in any step" : "n/a: no communication in the step";
        // In a braced list, so the n/a notes are taken in column order.
        const std::vector<std::string> pcts = {na.value_or(num(m.overlap_pct()), name, "overlap %", in_step),
                                               na.value_or(num(m.comm_fraction_pct()), name, "comm %", na_empty_window()),
                                               na.value_or(num(m.exposed_fraction_pct()), name, "exposed %", na_empty_window())};
        h += "<tr>" + td(label) + td(ms(m.window_ns), true) + td(ms(m.compute_ns), true) + td(ms(m.comm_ns), true) + td(ms(m.overlap_ns), true) +
             td(ms(m.exposed_ns()), true) + td(pcts[0], true) + td(pcts[1], true) + td(pcts[2], true) + td(ms(m.idle_ns()), true) + "</tr>\n";
      };
      for (const StepRow& s : rr.steps) row(step_label(s.step), fmt::format("step {}", s.step.number), s.m);
      row("all", "all steps", rr.all_steps);
      h += "</table>\n" + na_lines(na);
      if (std::string a = aborted_steps_sentence(rr.aborted_steps); !a.empty()) h += "<p>" + html_escape(a) + "</p>\n";
      if (std::string o = outside_steps_sentence(rr.outside); !o.empty()) h += "<p>" + html_escape(o) + "</p>\n";
    }
    if (!rr.collectives.empty()) {
      const bool waits = std::any_of(rr.collectives.begin(), rr.collectives.end(), [](const metrics::CollectiveStats& c) { return c.link_ns.has_value(); });
      h += std::string("<table><tr><th>collective</th><th>count</th><th>MB</th><th>time ms</th><th>algbw GB/s</th><th>busbw GB/s</th><th>group</th>") +
           (waits ? "<th>wait %</th>" : "") + "</tr>\n";
      NaNotes na;
      for (const metrics::CollectiveStats& c : rr.collectives) {
        const std::string kind(model::to_string(c.kind));
        // In a braced list, so the n/a notes are taken in column order.
        const std::vector<std::string> cells = {na.value_or(c.sized_count ? fmt::format("{:.3f}", c.bytes / 1e6) : "", kind, "MB", na_text(c.bytes_na(), c.kind)),
                                                na.value_or(num(c.algbw_gbps()), kind, "algbw GB/s", na_text(c.bandwidth_na(), c.kind)),
                                                na.value_or(num(c.busbw_gbps()), kind, "busbw GB/s", na_text(c.busbw_na(), c.kind)),
                                                na.value_or(c.group_size ? std::to_string(c.group_size) : "", kind, "group", na_text(c.group_na(), c.kind))};
        h += "<tr>" + td(kind) + td(std::to_string(c.count), true) + td(cells[0], true) + td(ms(c.time_ns), true) + td(cells[1], true) + td(cells[2], true) +
             td(cells[3], true) + (waits ? td(na.value_or(num(c.wait_pct()), kind, "wait %", wait_na_text()), true) : "") + "</tr>\n";
      }
      h += "</table>\n" + na_lines(na);
      for (const metrics::CollectiveStats& c : rr.collectives)
        if (std::string p = partly_sized_text(c); !p.empty()) h += "<p>" + html_escape(fmt::format("{}: {}", model::to_string(c.kind), p)) + "</p>\n";
    }
    if (!rr.top_device.empty()) {
      h += "<table><tr><th>top device activity</th><th>class</th><th>count</th><th>time ms</th></tr>\n";
      for (const KernelTime& k : rr.top_device)
        h += "<tr>" + name_cell(k.name, "name", true) + td(std::string(model::to_string(k.cls))) +
             td(std::to_string(k.count), true) + td(ms(k.time_ns), true) + "</tr>\n";
      h += "</table>\n";
    }
    // Prefetch table.
    const metrics::RankPrefetch& p = rr.prefetch;
    h += "<h3>Backward prefetch</h3>\n";
    h += fmt::format("<p>configured: {}; verdict: <span class=\"{}\">{}</span></p>\n", html_escape(p.configured.empty() ? "unknown" : p.configured),
                     p.verdict == metrics::Verdict::Effective ? "good" : "bad", html_escape(run_sentence(p)));
    if (p.na == metrics::NotApplicable::None) {
      if (p.unit_identity != model::UnitIdentity::Named) h += "<p>units: " + html_escape(unit_identity_sentence(p.unit_identity)) + "</p>\n";
      for (const metrics::StepPrefetch& s : p.steps) {
        const Table t = unit_table(s);
        if (t.rows.empty()) {
          h += "<p>step " + html_escape(std::to_string(s.step)) + ": " + html_escape(step_sentence(s, p)) + "</p>\n";
          continue;
        }
        h += "<details><summary>step " + html_escape(std::to_string(s.step)) + ": " + html_escape(step_sentence(s, p)) + "</summary>\n";
        h += "<table><tr>";
        for (const std::string& c : t.header) h += "<th>" + html_escape(c) + "</th>";
        h += "</tr>\n";
        for (const auto& row : t.rows) {
          h += "<tr>";
          for (size_t c = 0; c < row.size(); ++c) h += td(row[c], c >= 2 && c <= 5);
          h += "</tr>\n";
        }
        h += "</table></details>\n";
      }
    }
    // Memory: measured vs predicted bars.
    const metrics::RankMemory& m = rr.memory;
    h += "<h3>Memory, measured vs predicted</h3>\n";
    bool any = false;
    for (const metrics::MemoryRow& row : m.rows) any = any || row.measured || row.predicted;
    if (!any) {
      h += "<p>" + html_escape(memory_not_applicable(m)) + "</p>\n";
    } else {
      // Each category against its own prediction, on its own scale (the longer of the two fills the row), so
      // a small category's departure shows as clearly as a large one's; the allocator's total, which the
      // model does not predict, is a line of text apart.
      std::vector<const metrics::MemoryRow*> rows;
      for (const metrics::MemoryRow& row : m.rows)
        if (row.category == "allocator_total") {
          if (row.measured) h += fmt::format("<p>allocator total (not predicted): {:.3f} MB</p>\n", *row.measured / 1e6);
        } else {
          rows.push_back(&row);
        }
      h += fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"860\" height=\"{}\" role=\"img\">", 30 * rows.size() + 10);
      for (size_t i = 0; i < rows.size(); ++i) {
        const metrics::MemoryRow& row = *rows[i];
        const double scale = std::max({1.0, row.measured.value_or(0), row.predicted.value_or(0)});
        double y = 5 + 30.0 * double(i);
        h += fmt::format("<text x=\"0\" y=\"{:.1f}\" font-size=\"12\">{}</text>", y + 14, html_escape(row.category));
        if (row.measured)
          h += fmt::format("<rect x=\"150\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"11\" fill=\"#4e79a7\"><title>measured {:.3f} MB</title></rect>", y, 560 * *row.measured / scale,
                           *row.measured / 1e6);
        if (row.predicted)
          h += fmt::format("<rect x=\"150\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"11\" fill=\"#f28e2b\"><title>predicted {:.3f} MB</title></rect>", y + 12,
                           560 * *row.predicted / scale, *row.predicted / 1e6);
        std::string values = row.measured ? fmt::format("{:.3f}", *row.measured / 1e6) : "n/a";
        values += " / " + (row.predicted ? fmt::format("{:.3f} MB", *row.predicted / 1e6) : std::string("n/a"));
        if (row.measured && row.predicted && *row.predicted > 0) values += fmt::format(" ({:+.1f} %)", 100 * (*row.measured - *row.predicted) / *row.predicted);
        h += fmt::format("<text x=\"716\" y=\"{:.1f}\" font-size=\"11\">{}</text>", y + 14, html_escape(values));
      }
      h += "</svg>\n<p class=\"legend\"><span style=\"color:#4e79a7\">■ measured</span> <span style=\"color:#f28e2b\">■ predicted</span> (each category on its own scale; MB measured / predicted)</p>\n";
      NaNotes na;
      for (const metrics::MemoryRow& row : m.rows) {
        if (!row.measured) na.cell(row.category, "measured", na_text(row.measured_na));
        if (!row.predicted) na.cell(row.category, "predicted", na_text(row.predicted_na));
      }
      h += na_lines(na);
      if (const std::string s = states_model(m); !s.empty()) h += "<p>Model states: " + html_escape(s) + "</p>\n";
      if (m.activations) h += "<p>Activations: " + html_escape(activations_how(*m.activations)) + "</p>\n";
      if (const std::string d = departs_most(m); !d.empty()) h += "<p>Departs most: " + html_escape(d) + "</p>\n";
      if (const std::string why = memory_not_applicable(m); !why.empty()) h += "<p>" + html_escape(why) + "</p>\n";
    }
    h += "</details>\n";
  }
  h += "<h2>Stragglers</h2>\n";
  if (r.stragglers.not_applicable != metrics::StragglersNa::None) {
    h += "<p>" + html_escape(na_text(r.stragglers.not_applicable)) + "</p>\n";
  } else {
    h += "<p>" + html_escape(fmt::format("{} collective instances matched across ranks, {}.", r.stragglers.instances.size(), pairing_text(r.stragglers.pairing))) + "</p>\n";
    h += "<table><tr><th>rank</th><th>times last</th><th>total late ms</th><th>max late ms</th></tr>\n";
    for (const metrics::StragglerRank& s : r.stragglers.ranks)
      h += "<tr>" + td(std::to_string(s.rank)) + td(std::to_string(s.times_last), true) + td(s.total_late_by_ns == INT64_MAX ? "over 2^63 ns" : ms(s.total_late_by_ns), true) + td(s.max_late_by_ns == INT64_MAX ? "over 2^63 ns" : ms(s.max_late_by_ns), true) + "</tr>\n";
    h += "</table>\n";
  }
  if (!r.links.empty()) {
    h += "<h2>Links</h2>\n<p>Collectives across ranks, each instance timed by its fastest rank (the link's time, without waiting for peers).</p>\n";
    h += "<table><tr><th>link</th><th>instances</th><th>MB</th><th>fastest ms</th><th>algbw GB/s</th><th>busbw GB/s</th><th>group</th></tr>\n";
    for (const metrics::LinkStats& l : r.links)
      h += "<tr>" + td(std::string(model::to_string(l.kind))) + td(std::to_string(l.instances), true) + td(l.sized ? fmt::format("{:.3f}", l.bytes / 1e6) : "n/a", true) +
           td(ms(l.fastest_ns), true) + td(l.algbw_gbps() ? num(l.algbw_gbps()) : "n/a", true) + td(l.busbw_gbps() ? num(l.busbw_gbps()) : "n/a", true) +
           td(l.group_size ? std::to_string(l.group_size) : "n/a", true) + "</tr>\n";
    h += "</table>\n";
  }
  h += "</body></html>\n";
  // Each defined column's header carries its definition as a tooltip (the text report's legend, the JSON's
  // definitions): table by table, each named by its first column.
  for (size_t row = h.find("<table><tr><th>"); row != std::string::npos; row = h.find("<table><tr><th>", row + 1)) {
    const size_t first = row + 15;
    size_t end_row = h.find("</tr>", row);
    const std::string table = h.substr(first, h.find("</th>", first) - first);
    for (size_t th = h.find("<th>", row); th != std::string::npos && th < end_row; th = h.find("<th>", th + 1)) {
      const size_t close = h.find("</th>", th);
      const std::string& d = definition(table, h.substr(th + 4, close - th - 4));
      if (d.empty()) continue;
      const std::string title = "<th title=\"" + html_escape(d) + "\">";
      h.replace(th, 4, title);
      end_row = h.find("</tr>", row);
    }
  }
  return h;
}

}  // namespace shardscope::report
