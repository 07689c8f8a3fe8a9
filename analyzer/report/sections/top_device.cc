#include "analyzer/report/sections/top_device.h"

#include <algorithm>
#include <span>

#include <fmt/format.h>

#include "analyzer/report/cells.h"
#include "analyzer/report/definitions.h"
#include "analyzer/report/html_parts.h"
#include "analyzer/report/report_keys.h"

namespace shardscope::report {
namespace {

namespace k = report_keys;

// The class, and for communication the collective it carries out: "communication (all_to_all_dispatch)".
std::string class_cell(const KernelTime& kt) {
  std::string c(model::to_string(kt.cls));
  if (kt.cls == model::IntervalClass::Communication && kt.coll != model::CollectiveKind::None &&
      kt.coll != model::CollectiveKind::Unknown)
    c += " (" + std::string(model::to_string(kt.coll)) + ")";
  return c;
}

// Bounded (no --steps), the longest few only, so the default report stays short at any kernel count.
std::span<const KernelTime> shown(const Context& c) {
  const std::vector<KernelTime>& all = c.rank->top_device;
  return std::span(all).first(c.sel.bounded ? std::min(c.sel.max_top_device, all.size()) : all.size());
}

class TopDevice final : public Section {
 public:
  std::string_view key() const override { return k::kTopDevice; }

  void text(const Context& c, TextOut& out) const override {
    const std::vector<KernelTime>& all = c.rank->top_device;
    if (all.empty()) return;
    Table t{{"top device activity", "class", "count", "time ms"}, {}, 2};
    const std::span<const KernelTime> rows = shown(c);
    for (const KernelTime& kt : rows)
      t.rows.push_back({kt.name.size() > 90 ? kt.name.substr(0, 87) + "..." : kt.name, class_cell(kt),
                        std::to_string(kt.count), ms_cell(kt.time_ns)});
    // Bounded, what was left out is said on the legend's line, not a line of its own.
    if (rows.size() == all.size()) out.para("device time by name:");
    out.table(t);
    std::string l = legend(t.header, out.markdown() ? "" : "    ");
    if (rows.size() < all.size())
      l.replace(l.find("legend: "), 8,
                fmt::format("device time by name, the {} longest of {} (--steps all for all); legend: ", rows.size(),
                            all.size()));
    if (!l.empty()) out.raw(l + (out.markdown() ? "\n" : ""));
  }

  // JSON holds every name.
  void json(const Context& c, nlohmann::json& o) const override {
    o[k::kTopDevice] = nlohmann::json::array();
    for (const KernelTime& kt : c.rank->top_device)
      o[k::kTopDevice].push_back(
          {{k::kName, kt.name},
           {k::kClass, model::to_string(kt.cls)},
           {k::kKind, kt.cls == model::IntervalClass::Communication ? nlohmann::json(model::to_string(kt.coll))
                                                                    : nlohmann::json(nullptr)},
           {k::kCount, kt.count},
           {k::kTimeNs, kt.time_ns}});
  }

  void html(const Context& c, std::string& h) const override {
    const std::vector<KernelTime>& all = c.rank->top_device;
    if (all.empty()) return;
    const std::span<const KernelTime> rows = shown(c);
    if (rows.size() < all.size())
      h += fmt::format("<p class=\"na\">Device time by name: the {} longest of {}; --steps all for every row.</p>\n",
                       rows.size(), all.size());
    h += "<table><tr><th>top device activity</th><th>class</th><th>count</th><th>time ms</th></tr>\n";
    for (const KernelTime& kt : rows)
      h += "<tr>" + html::name_cell(kt.name, "name", true) + html::td(class_cell(kt)) +
           html::td(std::to_string(kt.count), true) + html::td(ms_cell(kt.time_ns), true) + "</tr>\n";
    h += "</table>\n";
  }
};

}  // namespace

const Section& top_device_section() {
  static const TopDevice s;
  return s;
}

}  // namespace shardscope::report
