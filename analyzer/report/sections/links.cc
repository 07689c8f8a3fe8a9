#include "analyzer/report/sections/links.h"

#include <fmt/format.h>

#include "analyzer/report/cells.h"
#include "analyzer/report/collectives_render.h"
#include "analyzer/report/html_parts.h"
#include "analyzer/report/report_keys.h"

namespace shardscope::report {
namespace {

namespace k = report_keys;

nlohmann::json link_number(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

class Links final : public Section {
 public:
  std::string_view key() const override { return k::kLinks; }

  // Not in the default view, which has the summary's links line.
  void text(const Context& c, TextOut& out) const override {
    if (c.report.links.empty() || c.sel.is_default()) return;
    Table t{{"link", "instances", "MB (1e6 B)", "fastest ms", "algbw GB/s (1e9 B/s)", "busbw GB/s (1e9 B/s)", "group"},
            {},
            1};
    NaNotes na;
    for (const metrics::LinkStats& l : c.report.links) {
      const std::string kind(model::to_string(l.kind));
      t.rows.push_back({kind, std::to_string(l.instances),
                        na.value_or(l.sized ? mb_cell(double(l.bytes)) : "", kind, "MB (1e6 B)",
                                    na_text(metrics::CollectiveNa::NoMessageSize, l.kind)),
                        ms_cell(l.fastest_ns),
                        na.value_or(number_cell(l.algbw_gbps()), kind, "algbw GB/s (1e9 B/s)",
                                    na_text(metrics::CollectiveNa::NoMessageSize, l.kind)),
                        na.value_or(number_cell(l.busbw_gbps()), kind, "busbw GB/s (1e9 B/s)",
                                    na_text(l.sized ? metrics::CollectiveNa::NoGroupSizeForBusbw
                                                    : metrics::CollectiveNa::NoMessageSize,
                                            l.kind)),
                        na.value_or(l.group_size ? std::to_string(l.group_size) : "", kind, "group",
                                    na_text(metrics::CollectiveNa::NoGroupSize, l.kind))});
    }
    out.gap();
    out.heading(2, "links: each collective instance timed by its fastest rank");
    out.table(t, na);
    out.legend(t.header);
  }

  void json(const Context& c, nlohmann::json& into) const override {
    into[k::kLinks] = nlohmann::json::array();
    for (const metrics::LinkStats& l : c.report.links)
      into[k::kLinks].push_back(
          {{k::kKind, model::to_string(l.kind)},
           {k::kInstances, l.instances},
           {k::kFastestNs, l.fastest_ns},
           {k::kBytes, l.sized ? nlohmann::json(l.bytes) : nlohmann::json(nullptr)},
           {k::kSizedCount, l.sized},
           {k::kAlgbwGbps, link_number(l.algbw_gbps())},
           {k::kBusbwGbps, link_number(l.busbw_gbps())},
           {k::kGroupSize, l.group_size ? nlohmann::json(l.group_size) : nlohmann::json(nullptr)}});
  }

  void html(const Context& c, std::string& h) const override {
    if (c.report.links.empty()) return;
    h += "<h2>Links</h2>\n<p>Collectives across ranks, each instance timed by its fastest rank (the link's time, "
         "without waiting for peers).</p>\n";
    h += "<table><tr><th>link</th><th>instances</th><th>MB (1e6 B)</th><th>fastest ms</th><th>algbw GB/s (1e9 "
         "B/s)</th><th>busbw GB/s (1e9 B/s)</th><th>group</th></tr>\n";
    for (const metrics::LinkStats& l : c.report.links)
      h += "<tr>" + html::td(std::string(model::to_string(l.kind))) + html::td(std::to_string(l.instances), true) +
           html::td(l.sized ? mb_cell(double(l.bytes)) : "n/a", true) + html::td(ms_cell(l.fastest_ns), true) +
           html::td(l.algbw_gbps() ? number_cell(l.algbw_gbps()) : "n/a", true) +
           html::td(l.busbw_gbps() ? number_cell(l.busbw_gbps()) : "n/a", true) +
           html::td(l.group_size ? std::to_string(l.group_size) : "n/a", true) + "</tr>\n";
    h += "</table>\n";
  }
};

}  // namespace

const Section& links_section() {
  static const Links s;
  return s;
}

}  // namespace shardscope::report
