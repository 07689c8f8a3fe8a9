// The HTML report: the page (style, title), every section's HTML in order (sections.cc), then each defined
// column's header given its definition.
#include <fmt/format.h>

#include "analyzer/report/definitions.h"
#include "analyzer/report/render.h"
#include "analyzer/report/section.h"

namespace shardscope::report {

std::string html_escape(std::string_view in) {
  std::string o;
  o.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      // A line break or tab in a name would show as a space: shown as \n and \t, as the text report does.
      case '\n': o += "\\n"; break;
      case '\t': o += "\\t"; break;
      // A control character from a trace (a terminal escape in a name) is shown as a code, not passed on;
      // so is a C1 control (U+0080 to U+009F, UTF-8 C2 80 to C2 9F), U+0085 a line break to some readers.
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
          o += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
        else if (static_cast<unsigned char>(c) == 0xc2 && i + 1 < in.size() &&
                 static_cast<unsigned char>(in[i + 1]) >= 0x80 && static_cast<unsigned char>(in[i + 1]) <= 0x9f)
          o += fmt::format("\\u{:04x}", static_cast<unsigned char>(in[++i]));
        else
          o += c;
    }
  }
  return o;
}

std::string render_html(const Report& r, const Selection& sel) {
  const analysis::RunSummary summary = analysis::summarize_run(r);
  const std::vector<int> shown = selected_ranks(r, sel);
  const Context c{r, sel, summary, shown};
  std::string h = R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>shardscope report</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:2px 8px}td.n{text-align:right;font-variant-numeric:tabular-nums}
th{background:#f3f3f3}.legend span{margin-right:1.2em}.na{color:#555;font-size:90%}.warn{color:#a15c00}.bad{color:#b00020;font-weight:bold}.good{color:#1b7f3b;font-weight:bold}
ul.summary{background:#f7f7f7;border:1px solid #ddd;padding:.8em 2em;max-width:70em}ul.summary li{margin:.2em 0}
details>summary{cursor:pointer;font-weight:bold;margin:.6em 0}td.name{max-width:36em;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
</style></head><body>
)";
  h += fmt::format("<h1>shardscope report</h1><p>{} rank(s) from {}</p>\n", r.ranks.size(),
                   html_escape(fmt::format("{}", fmt::join(r.inputs, ", "))));
  for (const Section* s : run_sections()) s->html(c, h);
  h += "</body></html>\n";
  // Each defined column's header carries its definition as a tooltip (the text report's legend, the JSON's
  // definitions): table by table, each named by its first column.
  for (size_t row = h.find("<table><tr><th>"); row != std::string::npos; row = h.find("<table><tr><th>", row + 1)) {
    const size_t first = row + 15;
    size_t end_row = h.find("</tr>", row);
    const std::string table = h.substr(first, h.find("</th>", first) - first);
    for (size_t th = h.find("<th>", row); th != std::string::npos && th < end_row; th = h.find("<th>", th + 1)) {
      const size_t close = h.find("</th>", th);
      const std::string& d = definition(table, h.substr(th + 4, close - th - 4));
      if (d.empty()) continue;
      const std::string title = "<th title=\"" + html_escape(d) + "\">";
      h.replace(th, 4, title);
      end_row = h.find("</tr>", row);
    }
  }
  return h;
}

}  // namespace shardscope::report
