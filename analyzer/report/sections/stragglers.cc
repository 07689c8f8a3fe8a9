#include "analyzer/report/sections/stragglers.h"

#include <fmt/format.h>

#include "analyzer/report/cells.h"
#include "analyzer/report/collectives_render.h"
#include "analyzer/report/html_parts.h"
#include "analyzer/report/report_keys.h"
#include "analyzer/report/sentences.h"

namespace shardscope::report {
namespace {

namespace k = report_keys;

// A lateness between ranks' clocks that reached the end of int64 (they lie that far apart): null, never the
// saturated number.
nlohmann::json ns_or_null(int64_t ns) { return ns == INT64_MAX ? nlohmann::json(nullptr) : nlohmann::json(ns); }

// The rows the text and HTML show: the shown ranks' and the straggler's.
std::vector<const metrics::StragglerRank*> shown_rows(const Context& c) {
  std::vector<const metrics::StragglerRank*> rows;
  for (const metrics::StragglerRank& s : c.report.stragglers.ranks)
    if (c.rank_shown(s.rank) || (c.summary.straggler && c.summary.straggler->rank == s.rank)) rows.push_back(&s);
  return rows;
}

class Stragglers final : public Section {
 public:
  std::string_view key() const override { return k::kStragglers; }

  void text(const Context& c, TextOut& out) const override {
    const metrics::Stragglers& st = c.report.stragglers;
    out.gap();
    out.heading(2, "stragglers");
    if (st.not_applicable != metrics::StragglersNa::None) return out.para(na_text(st.not_applicable));
    Table t{{"rank", "times last", "total late ms", "max late ms"}, {}, 1};
    for (const metrics::StragglerRank* s : shown_rows(c))
      t.rows.push_back({std::to_string(s->rank), std::to_string(s->times_last), late_ms_cell(s->total_late_by_ns),
                        late_ms_cell(s->max_late_by_ns)});
    out.para(fmt::format(
        "{} collective instances matched across ranks {}; the last rank to arrive, and by how much it trailed the "
        "next-latest{}:",
        st.instances.size(), pairing_text(st.pairing),
        t.rows.size() < st.ranks.size() ? " (the ranks shown and the straggler; --ranks all for every rank)" : ""));
    out.table(t);
    out.legend(t.header);
  }

  void json(const Context& c, nlohmann::json& into) const override {
    const metrics::Stragglers& st = c.report.stragglers;
    nlohmann::json s;
    if (st.not_applicable != metrics::StragglersNa::None) s[k::kReason] = na_text(st.not_applicable);
    s[k::kRanks] = nlohmann::json::array();
    for (const metrics::StragglerRank& sr : st.ranks)
      s[k::kRanks].push_back({{k::kRank, sr.rank},
                              {k::kTimesLast, sr.times_last},
                              {k::kTotalLateByNs, ns_or_null(sr.total_late_by_ns)},
                              {k::kMaxLateByNs, ns_or_null(sr.max_late_by_ns)}});
    static constexpr const char* kPairings[] = {nullptr, "position", "sequence", "mixed"};
    const char* pairing = kPairings[size_t(st.pairing)];
    s[k::kPairing] = pairing ? nlohmann::json(pairing) : nlohmann::json(nullptr);
    s[k::kInstances] = nlohmann::json::array();
    for (const metrics::StragglerInstance& i : st.instances)
      s[k::kInstances].push_back({{k::kKind, model::to_string(i.kind)},
                                  {k::kOrdinal, i.ordinal},
                                  {k::kBySeq, i.by_seq},
                                  {k::kLastRank, i.last_rank},
                                  {k::kLateByNs, ns_or_null(i.late_by_ns)},
                                  {k::kSpreadNs, ns_or_null(i.spread_ns)}});
    into[k::kStragglers] = s;
  }

  void html(const Context& c, std::string& h) const override {
    const metrics::Stragglers& st = c.report.stragglers;
    h += "<h2>Stragglers</h2>\n";
    if (st.not_applicable != metrics::StragglersNa::None) {
      h += "<p>" + html_escape(na_text(st.not_applicable)) + "</p>\n";
      return;
    }
    h += "<p>" +
         html_escape(fmt::format("{} collective instances matched across ranks, {}.", st.instances.size(),
                                 pairing_text(st.pairing))) +
         "</p>\n";
    h += "<table><tr><th>rank</th><th>times last</th><th>total late ms</th><th>max late ms</th></tr>\n";
    const std::vector<const metrics::StragglerRank*> rows = shown_rows(c);
    for (const metrics::StragglerRank* s : rows)
      h += "<tr>" + html::td(std::to_string(s->rank)) + html::td(std::to_string(s->times_last), true) +
           html::td(late_ms_cell(s->total_late_by_ns), true) + html::td(late_ms_cell(s->max_late_by_ns), true) +
           "</tr>\n";
    h += "</table>\n";
    if (rows.size() < st.ranks.size())
      h += "<p class=\"na\">The ranks shown and the straggler; --ranks all for every rank.</p>\n";
  }
};

}  // namespace

const Section& stragglers_section() {
  static const Stragglers s;
  return s;
}

}  // namespace shardscope::report
