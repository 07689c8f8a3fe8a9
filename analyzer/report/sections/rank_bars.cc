#include "analyzer/report/sections/rank_bars.h"

#include <fmt/format.h>

#include "analyzer/report/html_parts.h"
#include "analyzer/report/sentences.h"

namespace shardscope::report {
namespace {

// Every rank has its bar up to this many ranks; beyond, the selected ranks (the strips above show all).
constexpr size_t kBarsForAll = 64;

class RankBars final : public Section {
 public:
  std::string_view key() const override { return "rank_bars"; }

  void html(const Context& c, std::string& h) const override {
    const Report& r = c.report;
    std::vector<const RankReport*> barred;
    for (const RankReport& rr : r.ranks)
      if (r.ranks.size() <= kBarsForAll || c.rank_shown(rr.rank)) barred.push_back(&rr);
    h += "<h2>Where the time goes, per rank</h2>\n" + html::bar_legend();
    if (barred.size() < r.ranks.size())
      h += fmt::format(
          "<p class=\"na\">{} of {} ranks: those selected (--ranks); the distributions above cover every rank.</p>\n",
          barred.size(), r.ranks.size());
    const double W = 720, bar = 22, gap = 8, label = 90;
    h += fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" role=\"img\">",
                     label + W + 10, (bar + gap) * double(barred.size()) + 10);
    for (size_t i = 0; i < barred.size(); ++i) {
      const RankReport& rr = *barred[i];
      double y = 5 + double(i) * (bar + gap);
      h += fmt::format("<text x=\"0\" y=\"{:.1f}\" font-size=\"13\">rank {}</text>", y + bar * 0.7, rr.rank);
      const std::string what = fmt::format("rank {}, ", rr.rank);
      if (!rr.steps.empty()) h += html::stacked_bar(rr.all_steps, label, y, W, bar, what + "all steps, ");
      else if (rr.whole)
        h += html::stacked_bar(html::from_whole(*rr.whole), label, y, W, bar, what + "whole trace, ");
      else
        h += fmt::format("<text x=\"{}\" y=\"{:.1f}\" font-size=\"12\">{}</text>", label, y + bar * 0.7,
                         html_escape(na_text(rr.whole_na)));
    }
    h += "</svg>\n";
  }
};

}  // namespace

const Section& rank_bars_section() {
  static const RankBars s;
  return s;
}

}  // namespace shardscope::report
