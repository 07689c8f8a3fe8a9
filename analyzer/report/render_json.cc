// The JSON report: the schema and inputs, then every section's keys (sections.cc).
#include "analyzer/report/render.h"
#include "analyzer/report/report_keys.h"
#include "analyzer/report/section.h"

namespace shardscope::report {

nlohmann::json render_json(const Report& r) {
  namespace k = report_keys;
  // The JSON holds every rank and step: no section's JSON reads the selection or the shown ranks.
  const Selection sel;
  const std::vector<int> shown;
  const analysis::RunSummary summary = analysis::summarize_run(r);
  const Context c{r, sel, summary, shown};
  nlohmann::json out;
  out[k::kSchema] = k::kSchemaValue;
  out[k::kInputs] = r.inputs;
  for (const Section* s : run_sections()) s->json(c, out);
  return out;
}

}  // namespace shardscope::report
