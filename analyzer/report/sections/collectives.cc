#include "analyzer/report/sections/collectives.h"

#include <algorithm>

#include <fmt/format.h>

#include "analyzer/report/cells.h"
#include "analyzer/report/collectives_render.h"
#include "analyzer/report/html_parts.h"
#include "analyzer/report/report_keys.h"

namespace shardscope::report {
namespace {

namespace k = report_keys;

// One row per collective kind; the wait column where the reduce timed instances across ranks (two or more
// ranks of one run). The n/a notes are taken in column order.
Table collective_table(const RankReport& rr, NaNotes& na) {
  const bool waits = std::any_of(rr.collectives.begin(), rr.collectives.end(),
                                 [](const metrics::CollectiveStats& c) { return c.link_ns.has_value(); });
  Table t{
      {"collective", "count", "MB (1e6 B)", "time ms", "algbw GB/s (1e9 B/s)", "busbw GB/s (1e9 B/s)", "group"}, {}, 1};
  if (waits) t.header.push_back("wait %");
  for (const metrics::CollectiveStats& c : rr.collectives) {
    const std::string kind(model::to_string(c.kind));
    t.rows.push_back(
        {kind, std::to_string(c.count),
         na.value_or(c.sized_count ? mb_cell(double(c.bytes)) : "", kind, "MB (1e6 B)", na_text(c.bytes_na(), c.kind)),
         ms_cell(c.time_ns),
         na.value_or(number_cell(c.algbw_gbps()), kind, "algbw GB/s (1e9 B/s)", na_text(c.bandwidth_na(), c.kind)),
         na.value_or(number_cell(c.busbw_gbps()), kind, "busbw GB/s (1e9 B/s)", na_text(c.busbw_na(), c.kind)),
         na.value_or(c.group_size ? std::to_string(c.group_size) : "", kind, "group", na_text(c.group_na(), c.kind))});
    if (waits) t.rows.back().push_back(na.value_or(number_cell(c.wait_pct()), kind, "wait %", wait_na_text()));
  }
  return t;
}

nlohmann::json optional_number(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

class Collectives final : public Section {
 public:
  std::string_view key() const override { return k::kCollectives; }

  void text(const Context& c, TextOut& out) const override {
    const RankReport& rr = *c.rank;
    if (rr.collectives.empty()) return out.para("collectives: n/a: no communication");
    NaNotes na;
    const Table t = collective_table(rr, na);
    out.para("collectives:");
    out.table(t, na);
    out.legend(t.header);
    for (const metrics::CollectiveStats& cs : rr.collectives)
      if (std::string s = partly_sized_text(cs); !s.empty())
        out.para(fmt::format("{}: {}", model::to_string(cs.kind), s));
  }

  void json(const Context& c, nlohmann::json& o) const override {
    o[k::kCollectives] = nlohmann::json::array();
    for (const metrics::CollectiveStats& cs : c.rank->collectives) {
      nlohmann::json co;
      co[k::kKind] = model::to_string(cs.kind);
      co[k::kCount] = cs.count;
      co[k::kTimeNs] = cs.time_ns;
      co[k::kBytes] = cs.sized_count ? nlohmann::json(cs.bytes) : nlohmann::json(nullptr);
      co[k::kGroupSize] = cs.group_size ? nlohmann::json(cs.group_size) : nlohmann::json(nullptr);
      co[k::kAlgbwGbps] = optional_number(cs.algbw_gbps());
      co[k::kBusbwGbps] = optional_number(cs.busbw_gbps());
      co[k::kSizedCount] = cs.sized_count;
      if (cs.link_ns) {  // the reduce timed these instances across ranks
        co[k::kLinkNs] = *cs.link_ns;
        co[k::kWaitPct] = optional_number(cs.wait_pct());
      }
      for (auto [key, why] : {std::pair(k::kBytes, na_text(cs.bytes_na(), cs.kind)),
                              std::pair(k::kGroupSize, na_text(cs.group_na(), cs.kind)),
                              std::pair(k::kAlgbwGbps, na_text(cs.bandwidth_na(), cs.kind)),
                              std::pair(k::kBusbwGbps, na_text(cs.busbw_na(), cs.kind))})
        if (!why.empty()) co[k::kNa][key] = why;
      o[k::kCollectives].push_back(co);
    }
  }

  // No table when the rank has no collectives (the text says n/a; the HTML leaves the table out).
  void html(const Context& c, std::string& h) const override {
    const RankReport& rr = *c.rank;
    if (rr.collectives.empty()) return;
    NaNotes na;
    const Table t = collective_table(rr, na);
    h += html::number_table(t, na);
    for (const metrics::CollectiveStats& cs : rr.collectives)
      if (std::string p = partly_sized_text(cs); !p.empty())
        h += "<p>" + html_escape(fmt::format("{}: {}", model::to_string(cs.kind), p)) + "</p>\n";
  }
};

}  // namespace

const Section& collectives_section() {
  static const Collectives s;
  return s;
}

}  // namespace shardscope::report
