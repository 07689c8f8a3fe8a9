#include "analyzer/report/html_parts.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "analyzer/report/definitions.h"
#include "analyzer/report/render.h"
#include "model/saturating.h"
#include "tracer/format/printable.h"

namespace shardscope::report::html {
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
           "compute ms - overlapped ms, compute while no communication ran (compute ms = " +
               definition("step", "compute ms") + ")"},
          {"overlapped", "#59a14f", m.overlap_ns, "overlapped ms = " + definition("step", "overlapped ms")},
          {"exposed comm", "#e15759", m.exposed_ns(), "exposed ms = " + definition("step", "exposed ms")},
          {"other device", "#b07aa1", other,
           "device activity that is neither compute nor communication (memory copies, synchronisation)"},
          {"idle", "#d3d3d3", m.idle_ns(), "idle ms = " + definition("step", "idle ms")}};
}

std::string tick_label(double v) { return v == std::floor(v) ? fmt::format("{:.0f}", v) : fmt::format("{:g}", v); }

// At most kCellBytes of a name shown in its cell, the whole name to kTitleBytes in its tooltip.
constexpr size_t kCellBytes = 160, kTitleBytes = 1000;

}  // namespace

std::string name_cell(const std::string& s, const char* cls, bool title_always) {
  const bool clipped = s.size() > kCellBytes;
  std::string open = fmt::format("<td{}", *cls ? fmt::format(" class=\"{}\"", cls) : "");
  if (clipped || title_always) open += " title=\"" + html_escape(trace::printable(s, kTitleBytes)) + "\"";
  return open + ">" + html_escape(clipped ? trace::printable(s, kCellBytes) : s) + "</td>";
}

std::string td(const std::string& s, bool num) { return name_cell(s, num ? "n" : ""); }

std::string na_lines(const NaNotes& na) {
  std::string s;
  for (const std::string& l : na.lines()) s += "<p class=\"na\">" + html_escape(l) + "</p>\n";
  return s;
}

std::string number_table(const Table& t, const NaNotes& na) {
  std::string h = "<table><tr>";
  for (const std::string& col : t.header) h += "<th>" + col + "</th>";
  h += "</tr>\n";
  for (const std::vector<std::string>& row : t.rows) {
    h += "<tr>";
    for (size_t i = 0; i < row.size(); ++i) h += td(row[i], i > 0);
    h += "</tr>\n";
  }
  return h + "</table>\n" + na_lines(na);
}

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

std::string axis(double x0, double y, double width, double max, const char* unit) {
  std::string s = fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#555\"/>", x0, y,
                              x0 + width, y);
  const std::vector<double> t = ticks(max);
  for (double v : t) {
    const double x = x0 + (max > 0 ? width * v / max : 0);
    s += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#555\"/><text x=\"{0:.1f}\" "
        "y=\"{3:.1f}\" font-size=\"10\" "
        "text-anchor=\"middle\">{4}</text>",
        x, y, y + 4, y + 14, tick_label(v));
  }
  s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" text-anchor=\"end\">{}</text>", x0 + width, y + 26,
                   unit);
  return s;
}

std::string stacked_bar(const metrics::WindowMetrics& m, double x, double y, double width, double height,
                        const std::string& what) {
  std::string s;
  if (m.window_ns <= 0) return s;
  double at = x;
  for (const Segment& seg : segments(m)) {
    double w = width * double(seg.ns) / double(m.window_ns);
    if (w <= 0) continue;
    s += fmt::format(
        "<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" fill=\"{}\"><title>{}{}: {:.3f} ms "
        "({:.1f}%), {}</title></rect>",
        at, y, w, height, seg.color, what, seg.label, seg.ns / 1e6, 100.0 * double(seg.ns) / double(m.window_ns),
        html_escape(seg.meaning));
    at += w;
  }
  return s;
}

std::string bar_legend() {
  std::string s = "<p class=\"legend\">";
  for (const Segment& seg : segments({}))
    s += fmt::format(
        "<span title=\"{}\"><svg width=\"12\" height=\"12\"><rect width=\"12\" height=\"12\" fill=\"{}\"/></svg> "
        "{}</span> ",
        html_escape(seg.meaning), seg.color, seg.label);
  return s +
         "<br><span class=\"na\">compute only + overlapped = the table's compute ms; overlapped + exposed comm = its "
         "comm ms; hover a colour for its "
         "definition</span></p>";
}

// The exact figures (the bars draw shares, which µs rounding would move).
metrics::WindowMetrics from_whole(const metrics::HtaBreakdown& w) { return w.exact(); }

}  // namespace shardscope::report::html
