#include "analyzer/report/sections/across_ranks.h"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "analyzer/report/definitions.h"
#include "analyzer/report/html_parts.h"

namespace shardscope::report {
namespace {

// One value per rank as a strip: a dot per rank (jittered up and down so that a thousand stay apart), the
// median as a line, the marked ranks (the most exposed, the straggler) ringed and named.
struct Dot {
  int rank;
  double value;  // ms
};
std::string strip_plot(const std::string& what, const std::vector<Dot>& dots,
                       const std::vector<std::pair<int, std::string>>& marked) {
  if (dots.empty()) return "";
  const double label = 10, W = 720, top = 8, band = 36;
  double max = 0;
  for (const Dot& d : dots) max = std::max(max, d.value);
  const std::vector<double> t = html::ticks(max);
  const double scale_max = t.size() > 1 && t.back() < max ? t.back() + (t[1] - t[0]) : std::max(t.back(), max);
  std::vector<double> sorted;
  for (const Dot& d : dots) sorted.push_back(d.value);
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2];
  auto x_of = [&](double v) { return label + (scale_max > 0 ? W * v / scale_max : 0); };
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" role=\"img\" "
      "class=\"strip\"><title>{}</title>",
      label + W + 20, top + band + 34 + 14 * marked.size(), html_escape(what));
  s += fmt::format(
      "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#222\" "
      "stroke-width=\"2\"><title>median {3:.3f} ms</title></line>",
      x_of(median), top - 4, top + band + 4, median);
  for (const Dot& d : dots) {
    const double jitter = double((uint32_t(d.rank) * 2654435761u) % 1000) / 1000.0;
    s += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"#4e79a7\" fill-opacity=\"0.45\"><title>rank {}: {:.3f} "
        "ms</title></circle>",
        x_of(d.value), top + 2 + jitter * (band - 4), d.rank, d.value);
  }
  double note_y = top + band + 44;
  for (const auto& [rank, why] : marked) {
    auto d = std::find_if(dots.begin(), dots.end(), [&](const Dot& x) { return x.rank == rank; });
    if (d == dots.end()) continue;
    const double x = x_of(d->value);
    s += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"6\" fill=\"none\" stroke=\"#b00020\" stroke-width=\"2\"><title>rank "
        "{}: {:.3f} ms ({})</title></circle>",
        x, top + band / 2, rank, d->value, html_escape(why));
    s += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#b00020\" "
        "stroke-dasharray=\"2,2\"/>",
        x, top + band / 2 + 6, note_y - 10);
    s += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" fill=\"#b00020\" text-anchor=\"{}\">rank {}: {:.3f} ms "
        "({})</text>",
        x, note_y, x > label + W / 2 ? "end" : "start", rank, d->value, html_escape(why));
    note_y += 14;
  }
  s += html::axis(label, top + band + 6, W, scale_max, "ms");
  return s + "</svg>\n";
}

class AcrossRanks final : public Section {
 public:
  std::string_view key() const override { return "across_ranks"; }

  void html(const Context& c, std::string& h) const override {
    const Report& r = c.report;
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
    if (step_ms.empty()) return;
    std::vector<std::pair<int, std::string>> marked;
    if (c.summary.worst_rank >= 0 && r.ranks.size() > 1)
      marked.push_back({c.summary.worst_rank, "the most exposed communication"});
    if (c.summary.straggler && c.summary.straggler->beyond_noise())
      marked.push_back({c.summary.straggler->rank, "the straggler: most often last to arrive"});
    h += fmt::format(
        "<h2>Across ranks</h2>\n<p>One dot per rank ({} of {}), each the mean over the rank's steady steps (completed, "
        "not the job's warm-up step 0); the black line is the median.</p>\n",
        step_ms.size(), r.ranks.size());
    h += "<h3 title=\"" + html_escape(definition("step", "time ms")) + "\">Step time, ms</h3>\n" +
         strip_plot("step time per rank", step_ms, marked);
    h += "<h3 title=\"" + html_escape(definition("step", "exposed ms")) +
         "\">Exposed communication per step, ms</h3>\n" +
         strip_plot("exposed communication per rank", exposed_ms, marked);
  }
};

}  // namespace

const Section& across_ranks_section() {
  static const AcrossRanks s;
  return s;
}

}  // namespace shardscope::report
