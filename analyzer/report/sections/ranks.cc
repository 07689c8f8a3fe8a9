#include "analyzer/report/sections/ranks.h"

#include <fmt/format.h>

#include "analyzer/report/report_keys.h"
#include "tracer/format/printable.h"

namespace shardscope::report {
namespace {

namespace k = report_keys;

// The context of one rank's sections: the rank, and the steps its rows show.
Context of_rank(const Context& c, const RankReport& rr) {
  Context rc = c;
  rc.rank = &rr;
  rc.steps = selected_steps(rr, c.sel);
  return rc;
}

class Ranks final : public Section {
 public:
  std::string_view key() const override { return k::kRanks; }

  void text(const Context& c, TextOut& out) const override {
    for (const RankReport& rr : c.report.ranks) {
      if (!c.rank_shown(rr.rank)) continue;
      out.gap();
      out.heading(2, fmt::format("rank {}: {} ({}, {} events, {} on the device timeline)", rr.rank,
                                 trace::printable(rr.source), rr.format, rr.events, rr.device_events));
      const Context rc = of_rank(c, rr);
      for (const Section* s : rank_sections()) s->text(rc, out);
    }
  }

  // JSON holds every rank, whatever the selection.
  void json(const Context& c, nlohmann::json& into) const override {
    into[k::kRanks] = nlohmann::json::array();
    for (const RankReport& rr : c.report.ranks) {
      nlohmann::json o;
      o[k::kRank] = rr.rank;
      o[k::kSource] = rr.source;
      o[k::kFormat] = rr.format;
      o[k::kEvents] = rr.events;
      Context rc = c;
      rc.rank = &rr;
      for (const Section* s : rank_sections()) s->json(rc, o);
      into[k::kRanks].push_back(o);
    }
  }

  // Each rank's details folded; the worst rank's (the most exposed communication) open.
  void html(const Context& c, std::string& h) const override {
    for (const RankReport& rr : c.report.ranks) {
      if (!c.rank_shown(rr.rank)) continue;
      const Context rc = of_rank(c, rr);
      const bool worst = rr.rank == c.summary.worst_rank;
      h += fmt::format("<details{}><summary>Rank {}{}</summary><p>{} ({}, {} events, {} on the device timeline)</p>\n",
                       worst ? " open" : "", rr.rank,
                       worst && c.report.ranks.size() > 1 ? " (the most exposed communication)" : "",
                       html_escape(rr.source), html_escape(rr.format), rr.events, rr.device_events);
      if (std::string l = steps_left_out(rr, rc.steps, c.sel); !l.empty())
        h += "<p class=\"na\">Steps shown: " + html_escape(l) + "</p>\n";
      for (const Section* s : rank_sections()) s->html(rc, h);
      h += "</details>\n";
    }
  }
};

}  // namespace

const Section& ranks_section() {
  static const Ranks s;
  return s;
}

}  // namespace shardscope::report
