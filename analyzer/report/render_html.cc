#include <algorithm>
#include <cmath>
#include <span>

#include <fmt/format.h>

#include "analyzer/report/collectives_render.h"
#include "analyzer/report/memory_render.h"
#include "analyzer/report/render.h"
#include "tracer/format/printable.h"
#include "analyzer/report/summary_render.h"
#include "analyzer/report/definitions.h"
#include "analyzer/report/sentences.h"
#include "analyzer/report/table.h"
#include "analyzer/analysis/run_summary.h"
#include "model/saturating.h"

namespace shardscope::report {
namespace {

struct Segment {
  const char* label;
  const char* color;
  int64_t ns;
  std::string meaning;  // the tooltip and legend: in the per-step table's terms, from definitions.cc
};

// SPEC's split of a window: compute while no communication ran, communication under compute, exposed
// communication, other device work (memory, sync), idle. The five add up to the window; "compute only" and
// "overlapped" add up to the table's compute ms, "overlapped" and "exposed comm" to its comm ms.
std::vector<Segment> segments(const metrics::WindowMetrics& m) {
  int64_t other = std::max<int64_t>(0, model::sat_sub(model::sat_sub(m.busy_ns, m.compute_ns), m.exposed_ns()));
  return {{"compute only", "#4e79a7", m.compute_ns - m.overlap_ns,
           "compute ms - overlapped ms, compute while no communication ran (compute ms = " + definition("step", "compute ms") + ")"},
          {"overlapped", "#59a14f", m.overlap_ns, "overlapped ms = " + definition("step", "overlapped ms")},
          {"exposed comm", "#e15759", m.exposed_ns(), "exposed ms = " + definition("step", "exposed ms")},
          {"other device", "#b07aa1", other, "device activity that is neither compute nor communication (memory copies, synchronisation)"},
          {"idle", "#d3d3d3", m.idle_ns(), "idle ms = " + definition("step", "idle ms")}};
}

// Tick marks for an axis from 0 to `max`: a step of 1, 2 or 5 times a power of ten, about five of them.
std::vector<double> ticks(double max) {
  if (!(max > 0) || !std::isfinite(max)) return {0};
  double step = std::pow(10.0, std::floor(std::log10(max / 5)));
  for (double f : {1.0, 2.0, 5.0, 10.0})
    if (max / (step * f) <= 6) {
      step *= f;
      break;
    }
  std::vector<double> out;
  for (double t = 0; t <= max * (1 + 1e-9) && out.size() < 20; t += step) out.push_back(t);
  return out;
}

std::string tick_label(double v) { return v == std::floor(v) ? fmt::format("{:.0f}", v) : fmt::format("{:g}", v); }

// A horizontal axis at y for values 0..max drawn over [x0, x0 + width]: a line, ticks and "<value> ms".
std::string axis(double x0, double y, double width, double max, const char* unit) {
  std::string s = fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#555\"/>", x0, y, x0 + width, y);
  const std::vector<double> t = ticks(max);
  for (double v : t) {
    const double x = x0 + (max > 0 ? width * v / max : 0);
    s += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#555\"/><text x=\"{0:.1f}\" y=\"{3:.1f}\" font-size=\"10\" "
                     "text-anchor=\"middle\">{4}</text>",
                     x, y, y + 4, y + 14, tick_label(v));
  }
  s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" text-anchor=\"end\">{}</text>", x0 + width, y + 26, unit);
  return s;
}

// One value per rank as a strip: a dot per rank (jittered up and down so that a thousand stay apart), the
// median as a line, the marked ranks (the most exposed, the straggler) ringed and named.
struct Dot {
  int rank;
  double value;  // ms
};
std::string strip_plot(const std::string& what, const std::vector<Dot>& dots, const std::vector<std::pair<int, std::string>>& marked) {
  if (dots.empty()) return "";
  const double label = 10, W = 720, top = 8, band = 36;
  double max = 0;
  for (const Dot& d : dots) max = std::max(max, d.value);
  const std::vector<double> t = ticks(max);
  const double scale_max = t.size() > 1 && t.back() < max ? t.back() + (t[1] - t[0]) : std::max(t.back(), max);
  std::vector<double> sorted;
  for (const Dot& d : dots) sorted.push_back(d.value);
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2];
  auto x_of = [&](double v) { return label + (scale_max > 0 ? W * v / scale_max : 0); };
  std::string s = fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" role=\"img\" class=\"strip\"><title>{}</title>", label + W + 20,
                              top + band + 34 + 14 * marked.size(), html_escape(what));
  s += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#222\" stroke-width=\"2\"><title>median {3:.3f} ms</title></line>",
                   x_of(median), top - 4, top + band + 4, median);
  for (const Dot& d : dots) {
    const double jitter = double((uint32_t(d.rank) * 2654435761u) % 1000) / 1000.0;
    s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"#4e79a7\" fill-opacity=\"0.45\"><title>rank {}: {:.3f} ms</title></circle>", x_of(d.value),
                     top + 2 + jitter * (band - 4), d.rank, d.value);
  }
  double note_y = top + band + 44;
  for (const auto& [rank, why] : marked) {
    auto d = std::find_if(dots.begin(), dots.end(), [&](const Dot& x) { return x.rank == rank; });
    if (d == dots.end()) continue;
    const double x = x_of(d->value);
    s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"6\" fill=\"none\" stroke=\"#b00020\" stroke-width=\"2\"><title>rank {}: {:.3f} ms ({})</title></circle>", x,
                     top + band / 2, rank, d->value, html_escape(why));
    s += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#b00020\" stroke-dasharray=\"2,2\"/>", x, top + band / 2 + 6, note_y - 10);
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" fill=\"#b00020\" text-anchor=\"{}\">rank {}: {:.3f} ms ({})</text>", x, note_y,
                     x > label + W / 2 ? "end" : "start", rank, d->value, html_escape(why));
    note_y += 14;
  }
  s += axis(label, top + band + 6, W, scale_max, "ms");
  return s + "</svg>\n";
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

std::string stacked_bar(const metrics::WindowMetrics& m, double x, double y, double width, double height, const std::string& what = "") {
  std::string s;
  if (m.window_ns <= 0) return s;
  double at = x;
  for (const Segment& seg : segments(m)) {
    double w = width * double(seg.ns) / double(m.window_ns);
    if (w <= 0) continue;
    s += fmt::format("<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" fill=\"{}\"><title>{}{}: {:.3f} ms ({:.1f}%), {}</title></rect>", at, y, w,
                     height, seg.color, what, seg.label, seg.ns / 1e6, 100.0 * double(seg.ns) / double(m.window_ns), html_escape(seg.meaning));
    at += w;
  }
  return s;
}

std::string legend() {
  std::string s = "<p class=\"legend\">";
  for (const Segment& seg : segments({}))
    s += fmt::format("<span title=\"{}\"><svg width=\"12\" height=\"12\"><rect width=\"12\" height=\"12\" fill=\"{}\"/></svg> {}</span> ", html_escape(seg.meaning),
                     seg.color, seg.label);
  return s + "<br><span class=\"na\">compute only + overlapped = the table's compute ms; overlapped + exposed comm = its comm ms; hover a colour for its "
             "definition</span></p>";
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

std::string render_html(const Report& r, const Selection& sel) {
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

  const std::vector<int> shown = selected_ranks(r, sel);
  auto is_shown = [&](int rank) { return std::binary_search(shown.begin(), shown.end(), rank); };
  if (shown.size() < r.ranks.size())
    h += "<p>" + html_escape(fmt::format("Details below: rank{} {} ({}); --ranks all, worst:N or a list for others, --format json for everything",
                                         shown.size() == 1 ? "" : "s", analysis::rank_ranges(shown, 20),
                                         sel.ranks == Selection::Ranks::Worst ? "the most exposed communication" : "as selected")) +
         "</p>\n";

  // Each rank's step time and exposed communication, one dot per rank: a straggler stands out among a thousand.
  {
    std::vector<Dot> step_ms, exposed_ms;
    for (const RankReport& rr : r.ranks) {
      metrics::WindowMetrics sum;
      size_t n = 0;
      for (size_t i = 0; i < rr.steps.size(); ++i)
        if (!rr.steps[i].step.aborted && (i > 0 || rr.steps.size() == 1)) sum += rr.steps[i].m, ++n;
      if (!n) continue;
      step_ms.push_back({rr.rank, double(sum.window_ns) / 1e6 / double(n)});
      exposed_ms.push_back({rr.rank, double(sum.exposed_ns()) / 1e6 / double(n)});
    }
    std::vector<std::pair<int, std::string>> marked;
    if (summary.worst_rank >= 0 && r.ranks.size() > 1) marked.push_back({summary.worst_rank, "the most exposed communication"});
    if (summary.straggler) marked.push_back({summary.straggler->rank, "the straggler: most often last to arrive"});
    if (!step_ms.empty()) {
      h += fmt::format("<h2>Across ranks</h2>\n<p>One dot per rank ({} of {}), each the mean over the rank's steady steps (completed, after the warm-up "
                       "step); the black line is the median.</p>\n",
                       step_ms.size(), r.ranks.size());
      h += "<h3 title=\"" + html_escape(definition("step", "time ms")) + "\">Step time, ms</h3>\n" + strip_plot("step time per rank", step_ms, marked);
      h += "<h3 title=\"" + html_escape(definition("step", "exposed ms")) + "\">Exposed communication per step, ms</h3>\n" +
           strip_plot("exposed communication per rank", exposed_ms, marked);
    }
  }

  // Per-rank stacked bars: every rank up to kBarsForAll of them, the selected ones beyond.
  constexpr size_t kBarsForAll = 64;
  std::vector<const RankReport*> barred;
  for (const RankReport& rr : r.ranks)
    if (r.ranks.size() <= kBarsForAll || is_shown(rr.rank)) barred.push_back(&rr);
  h += "<h2>Where the time goes, per rank</h2>\n" + legend();
  if (barred.size() < r.ranks.size())
    h += fmt::format("<p class=\"na\">{} of {} ranks: those selected (--ranks); the distributions above cover every rank.</p>\n", barred.size(), r.ranks.size());
  const double W = 720, bar = 22, gap = 8, label = 90;
  h += fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" role=\"img\">", label + W + 10, (bar + gap) * double(barred.size()) + 10);
  for (size_t i = 0; i < barred.size(); ++i) {
    const RankReport& rr = *barred[i];
    double y = 5 + double(i) * (bar + gap);
    h += fmt::format("<text x=\"0\" y=\"{:.1f}\" font-size=\"13\">rank {}</text>", y + bar * 0.7, rr.rank);
    const std::string what = fmt::format("rank {}, ", rr.rank);
    if (!rr.steps.empty()) h += stacked_bar(rr.all_steps, label, y, W, bar, what + "all steps, ");
    else if (rr.whole) h += stacked_bar(from_whole(*rr.whole), label, y, W, bar, what + "whole trace, ");
    else h += fmt::format("<text x=\"{}\" y=\"{:.1f}\" font-size=\"12\">{}</text>", label, y + bar * 0.7, html_escape(na_text(rr.whole_na)));
  }
  h += "</svg>\n";

  // Each rank's details folded; the worst rank's (the most exposed communication) open.
  for (const RankReport& rr : r.ranks) {
    if (!is_shown(rr.rank)) continue;
    const std::vector<int64_t> steps = selected_steps(rr, sel);
    auto step_shown = [&](int64_t step) { return std::binary_search(steps.begin(), steps.end(), step); };
    h += fmt::format("<details{}><summary>Rank {}{}</summary><p>{} ({}, {} events, {} on the device timeline)</p>\n", rr.rank == summary.worst_rank ? " open" : "",
                     rr.rank, rr.rank == summary.worst_rank && r.ranks.size() > 1 ? " (the most exposed communication)" : "", html_escape(rr.source),
                     html_escape(rr.format), rr.events, rr.device_events);
    if (std::string l = steps_left_out(rr, steps, sel); !l.empty()) h += "<p class=\"na\">Steps shown: " + html_escape(l) + "</p>\n";
    if (rr.whole)
      h += fmt::format("<p>Whole trace ({}): window {:.3f} ms, overlap {}, idle {:.2f} %, compute {:.2f} %, non-compute {:.2f} %</p>\n",
                       html_escape(whole_trace_setting(*rr.whole)), rr.whole->window_us / 1e3, html_escape(pct_or(rr.whole->overlap_pct(), na_overlap())),
                       rr.whole->idle_pct(), rr.whole->compute_pct(), rr.whole->non_compute_pct());
    else
      h += "<p>Whole trace: " + html_escape(na_text(rr.whole_na)) + "</p>\n";
    if (rr.steps.empty()) {
      h += "<p>Steps: " + html_escape(na_text(rr.steps_na)) + "</p>\n";
    } else {
      // The per-step strip: the shown steps end to end, one stacked bar each, on a time axis in ms.
      int64_t total = 0;
      for (const StepRow& s : rr.steps)
        if (step_shown(s.step.number)) total = model::sat_add(total, std::max<int64_t>(0, s.m.window_ns));
      const double axis_ms = double(std::max<int64_t>(1, total)) / 1e6;
      std::vector<double> t = ticks(axis_ms);
      const double scale_ms = t.size() > 1 && t.back() < axis_ms ? t.back() + (t[1] - t[0]) : std::max(t.back(), axis_ms);
      const double x0 = 10, SW = 720;
      h += fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"78\" role=\"img\"><title>rank {}: the steps shown, end to end, in ms</title>",
                       x0 + SW + 20, rr.rank);
      double x = x0;
      for (const StepRow& s : rr.steps) {
        if (!step_shown(s.step.number)) continue;
        double w = SW * double(s.m.window_ns) / 1e6 / scale_ms;
        h += stacked_bar(s.m, x, 16, std::max(0.0, w - 2), 24, fmt::format("step {}, ", s.step.number));
        h += fmt::format("<text x=\"{:.1f}\" y=\"12\" font-size=\"10\">step {}: {:.3f} ms</text>", x, s.step.number, s.m.window_ns / 1e6);
        x += w;
      }
      h += axis(x0, 44, SW, scale_ms, "ms, the shown steps end to end");
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
      for (const StepRow& s : rr.steps)
        if (step_shown(s.step.number)) row(step_label(s.step), fmt::format("step {}", s.step.number), s.m);
      row("all", "all steps", rr.all_steps);
      h += "</table>\n" + na_lines(na);
      if (std::string a = aborted_steps_sentence(rr.aborted_steps); !a.empty()) h += "<p>" + html_escape(a) + "</p>\n";
      if (std::string o = outside_steps_sentence(rr.outside); !o.empty()) h += "<p>" + html_escape(o) + "</p>\n";
    }
    if (!rr.collectives.empty()) {
      const bool waits = std::any_of(rr.collectives.begin(), rr.collectives.end(), [](const metrics::CollectiveStats& c) { return c.link_ns.has_value(); });
      h += std::string("<table><tr><th>collective</th><th>count</th><th>MB (1e6 B)</th><th>time ms</th><th>algbw GB/s (1e9 B/s)</th><th>busbw GB/s (1e9 B/s)</th><th>group</th>") +
           (waits ? "<th>wait %</th>" : "") + "</tr>\n";
      NaNotes na;
      for (const metrics::CollectiveStats& c : rr.collectives) {
        const std::string kind(model::to_string(c.kind));
        // In a braced list, so the n/a notes are taken in column order.
        const std::vector<std::string> cells = {na.value_or(c.sized_count ? fmt::format("{:.3f}", c.bytes / 1e6) : "", kind, "MB (1e6 B)", na_text(c.bytes_na(), c.kind)),
                                                na.value_or(num(c.algbw_gbps()), kind, "algbw GB/s (1e9 B/s)", na_text(c.bandwidth_na(), c.kind)),
                                                na.value_or(num(c.busbw_gbps()), kind, "busbw GB/s (1e9 B/s)", na_text(c.busbw_na(), c.kind)),
                                                na.value_or(c.group_size ? std::to_string(c.group_size) : "", kind, "group", na_text(c.group_na(), c.kind))};
        h += "<tr>" + td(kind) + td(std::to_string(c.count), true) + td(cells[0], true) + td(ms(c.time_ns), true) + td(cells[1], true) + td(cells[2], true) +
             td(cells[3], true) + (waits ? td(na.value_or(num(c.wait_pct()), kind, "wait %", wait_na_text()), true) : "") + "</tr>\n";
      }
      h += "</table>\n" + na_lines(na);
      for (const metrics::CollectiveStats& c : rr.collectives)
        if (std::string p = partly_sized_text(c); !p.empty()) h += "<p>" + html_escape(fmt::format("{}: {}", model::to_string(c.kind), p)) + "</p>\n";
    }
    if (!rr.top_device.empty()) {
      const size_t n = sel.bounded ? std::min(sel.max_top_device, rr.top_device.size()) : rr.top_device.size();
      if (n < rr.top_device.size())
        h += fmt::format("<p class=\"na\">Device time by name: the {} longest of {}; --steps all for every row.</p>\n", n, rr.top_device.size());
      h += "<table><tr><th>top device activity</th><th>class</th><th>count</th><th>time ms</th></tr>\n";
      for (const KernelTime& k : std::span(rr.top_device).first(n))
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
        if (!step_shown(s.step)) continue;
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
      h += "</svg>\n<p class=\"legend\"><span style=\"color:#4e79a7\">■</span> <span title=\"" + html_escape(definition("memory", "measured MB")) +
           "\">measured MB</span> <span style=\"color:#f28e2b\">■</span> <span title=\"" + html_escape(definition("memory", "predicted MB")) +
           "\">predicted MB</span> (each category on its own scale; MB measured / predicted)</p>\n";
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
    size_t rows = 0;
    for (const metrics::StragglerRank& s : r.stragglers.ranks) {
      if (!is_shown(s.rank) && !(summary.straggler && summary.straggler->rank == s.rank)) continue;
      ++rows;
      h += "<tr>" + td(std::to_string(s.rank)) + td(std::to_string(s.times_last), true) + td(s.total_late_by_ns == INT64_MAX ? "over 2^63 ns" : ms(s.total_late_by_ns), true) + td(s.max_late_by_ns == INT64_MAX ? "over 2^63 ns" : ms(s.max_late_by_ns), true) + "</tr>\n";
    }
    h += "</table>\n";
    if (rows < r.stragglers.ranks.size()) h += "<p class=\"na\">The ranks shown and the straggler; --ranks all for every rank.</p>\n";
  }
  if (!r.links.empty()) {
    h += "<h2>Links</h2>\n<p>Collectives across ranks, each instance timed by its fastest rank (the link's time, without waiting for peers).</p>\n";
    h += "<table><tr><th>link</th><th>instances</th><th>MB (1e6 B)</th><th>fastest ms</th><th>algbw GB/s (1e9 B/s)</th><th>busbw GB/s (1e9 B/s)</th><th>group</th></tr>\n";
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
