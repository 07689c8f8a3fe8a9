#include "analyzer/report/sections/memory.h"

#include <algorithm>

#include <fmt/format.h>

#include "analyzer/report/cells.h"
#include "analyzer/report/definitions.h"
#include "analyzer/report/html_parts.h"
#include "analyzer/report/memory_render.h"
#include "analyzer/report/report_keys.h"

namespace shardscope::report {
namespace {

namespace k = report_keys;

bool any_value(const metrics::RankMemory& m) {
  return std::any_of(m.rows.begin(), m.rows.end(),
                     [](const metrics::MemoryRow& row) { return row.measured || row.predicted; });
}

nlohmann::json optional_number(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// Each category against its own prediction, on its own scale (the longer of the two fills the row), so a
// small category's departure shows as clearly as a large one's; the allocator's total, which the model does
// not predict, is a line of text apart.
std::string bars(const metrics::RankMemory& m) {
  std::string h;
  std::vector<const metrics::MemoryRow*> rows;
  for (const metrics::MemoryRow& row : m.rows)
    if (row.category == "allocator_total") {
      if (row.measured) h += fmt::format("<p>allocator total (not predicted): {}</p>\n", mb_text(*row.measured));
    } else {
      rows.push_back(&row);
    }
  h += fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"860\" height=\"{}\" role=\"img\">",
                   30 * rows.size() + 10);
  for (size_t i = 0; i < rows.size(); ++i) {
    const metrics::MemoryRow& row = *rows[i];
    // A value out of range has no bar (its text says so).
    auto drawn = [](const std::optional<double>& v) { return v && bytes_in_range(*v) ? v : std::nullopt; };
    const std::optional<double> measured = drawn(row.measured), predicted = drawn(row.predicted);
    const double scale = std::max({1.0, measured.value_or(0), predicted.value_or(0)});
    double y = 5 + 30.0 * double(i);
    h += fmt::format("<text x=\"0\" y=\"{:.1f}\" font-size=\"12\">{}</text>", y + 14, html_escape(row.category));
    if (measured)
      h += fmt::format(
          "<rect x=\"150\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"11\" fill=\"#4e79a7\"><title>measured {:.3f} "
          "MB</title></rect>",
          y, 560 * *measured / scale, *measured / 1e6);
    if (predicted)
      h += fmt::format(
          "<rect x=\"150\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"11\" fill=\"#f28e2b\"><title>predicted {:.3f} "
          "MB</title></rect>",
          y + 12, 560 * *predicted / scale, *predicted / 1e6);
    std::string values = row.measured ? mb_cell(*row.measured) : "n/a";
    values += " / " + (row.predicted ? mb_cell(*row.predicted) + " MB" : std::string("n/a"));
    if (row.measured && row.predicted && *row.predicted > 0)
      values += " (" + change_pct(*row.measured, *row.predicted, true) + ")";
    h += fmt::format("<text x=\"716\" y=\"{:.1f}\" font-size=\"11\">{}</text>", y + 14, html_escape(values));
  }
  return h + "</svg>\n<p class=\"legend\"><span style=\"color:#4e79a7\">■</span> <span title=\"" +
         html_escape(definition("memory", "measured MB")) +
         "\">measured MB</span> <span style=\"color:#f28e2b\">■</span> <span title=\"" +
         html_escape(definition("memory", "predicted MB")) +
         "\">predicted MB</span> (each category on its own scale; MB measured / predicted)</p>\n";
}

class Memory final : public Section {
 public:
  std::string_view key() const override { return k::kMemory; }

  void text(const Context& c, TextOut& out) const override {
    const metrics::RankMemory& m = c.rank->memory;
    if (!any_value(m)) return out.para("memory: " + memory_not_applicable(m));
    const bool split = std::any_of(m.rows.begin(), m.rows.end(), [](const auto& r) { return r.at_fullest; });
    Table t{{"memory", "measured MB", "predicted MB"}, {}, 1};
    if (split) t.header.push_back("at fullest MB");
    NaNotes na;
    for (const metrics::MemoryRow& row : m.rows) {
      t.rows.push_back({row.category,
                        na.value_or(row.measured ? mb_cell(*row.measured) : "", row.category, "measured MB",
                                    na_text(row.measured_na)),
                        na.value_or(row.predicted ? mb_cell(*row.predicted) : "", row.category, "predicted MB",
                                    na_text(row.predicted_na))});
      if (split) t.rows.back().push_back(row.at_fullest ? mb_cell(*row.at_fullest) : "-");
    }
    out.para("memory (peak per category vs the ZeRO model):");
    out.table(t, na);
    out.legend(t.header);
    // How the model predicted: detail, shown beside every selection but the default.
    if (const std::string s = states_model(m); !s.empty() && !c.sel.is_default()) out.para("model states: " + s);
    if (m.activations) out.para("activations: " + activations_how(*m.activations));
    if (const std::string d = departs_most(m); !d.empty()) out.para("departs most: " + d);
    if (const std::string why = memory_not_applicable(m); !why.empty()) out.para(why);
  }

  void json(const Context& c, nlohmann::json& o) const override {
    const metrics::RankMemory& mem = c.rank->memory;
    nlohmann::json m;
    m[k::kRows] = nlohmann::json::array();
    for (const metrics::MemoryRow& row : mem.rows) {
      nlohmann::json ro = {{k::kCategory, row.category},
                           {k::kMeasuredBytes, optional_number(row.measured)},
                           {k::kPredictedBytes, optional_number(row.predicted)}};
      if (!row.measured) ro[k::kNa][k::kMeasuredBytes] = na_text(row.measured_na);
      if (!row.predicted) ro[k::kNa][k::kPredictedBytes] = na_text(row.predicted_na);
      if (row.at_fullest) ro[k::kAtFullestBytes] = *row.at_fullest;
      m[k::kRows].push_back(ro);
    }
    if (mem.config) m[k::kMemoryCommand] = memory_command(*mem.config);
    const std::string departs = departs_most(mem), states = states_model(mem);
    m[k::kDepartsMost] = departs.empty() ? nlohmann::json(nullptr) : nlohmann::json(departs);
    m[k::kStatesModel] = states.empty() ? nlohmann::json(nullptr) : nlohmann::json(states);
    m[k::kActivationsModel] = activations_model(mem);
    if (const std::string why = memory_not_applicable(mem); !why.empty()) m[k::kReason] = why;
    o[k::kMemory] = m;
  }

  void html(const Context& c, std::string& h) const override {
    const metrics::RankMemory& m = c.rank->memory;
    h += "<h3>Memory, measured vs predicted</h3>\n";
    if (!any_value(m)) {
      h += "<p>" + html_escape(memory_not_applicable(m)) + "</p>\n";
      return;
    }
    h += bars(m);
    NaNotes na;
    for (const metrics::MemoryRow& row : m.rows) {
      if (!row.measured) na.cell(row.category, "measured", na_text(row.measured_na));
      if (!row.predicted) na.cell(row.category, "predicted", na_text(row.predicted_na));
    }
    h += html::na_lines(na);
    if (const std::string s = states_model(m); !s.empty()) h += "<p>Model states: " + html_escape(s) + "</p>\n";
    if (m.activations) h += "<p>Activations: " + html_escape(activations_how(*m.activations)) + "</p>\n";
    if (const std::string d = departs_most(m); !d.empty()) h += "<p>Departs most: " + html_escape(d) + "</p>\n";
    if (const std::string why = memory_not_applicable(m); !why.empty()) h += "<p>" + html_escape(why) + "</p>\n";
  }
};

}  // namespace

const Section& memory_section() {
  static const Memory s;
  return s;
}

}  // namespace shardscope::report
