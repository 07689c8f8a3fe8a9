// Every column's definition comes from one place: the text legend, the HTML tooltips and the JSON's
// definitions say the same, on a real run.
#include <gtest/gtest.h>

#include "analyzer/analysis/run.h"
#include "analyzer/report/definitions.h"
#include "analyzer/report/render.h"

namespace shardscope::report {
namespace {

TEST(Definitions, TextLegendHtmlTooltipsAndJsonAgree) {
  analysis::AnalysedRun run =
      analysis::analyse_run({std::string(SHARDSCOPE_SOURCE_DIR) + "/tests/golden/trainer_cpu_2ranks/pre"}, {});
  const std::string text = render_text(run.report, false, parse_selection("all", ""));
  const std::string html = render_html(run.report);
  const nlohmann::json json = render_json(run.report);
  ASSERT_TRUE(json.contains("definitions"));
  size_t checked = 0;
  for (const char* table : {"step", "collective", "rank", "memory", "top device activity"})
    for (const auto& [column, d] : json["definitions"][table].items()) {
      const std::string def = d.get<std::string>();
      EXPECT_EQ(def, definition(table, column));
      // The text legend may wrap between items, never inside one.
      EXPECT_NE(text.find(column + " = " + def), std::string::npos) << table << " / " << column;
      // A table's header cell, or the memory chart's legend entry.
      const std::string tooltip = "title=\"" + html_escape(def) + "\">" + html_escape(column) + "</";
      EXPECT_NE(html.find(tooltip), std::string::npos) << table << " / " << column;
      ++checked;
    }
  EXPECT_GE(checked, 20u);
  // The same header in two tables keeps two meanings.
  EXPECT_NE(definition("step", "time ms"), definition("collective", "time ms"));
}

}  // namespace
}  // namespace shardscope::report
