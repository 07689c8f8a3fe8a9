// The text and markdown report: the title, then every section's text in order (sections.cc).
#include <fmt/format.h>

#include "analyzer/report/render.h"
#include "analyzer/report/section.h"

namespace shardscope::report {

std::string render_text(const Report& r, bool md, const Selection& sel) {
  const analysis::RunSummary summary = analysis::summarize_run(r);
  const std::vector<int> shown = selected_ranks(r, sel);
  const Context c{r, sel, summary, shown};
  TextOut out(md);
  out.heading(1, fmt::format("shardscope report: {} rank(s) from {}", r.ranks.size(), fmt::join(r.inputs, ", ")));
  for (const Section* s : run_sections()) s->text(c, out);
  return out.take();
}

}  // namespace shardscope::report
