#include "analyzer/cli/report.h"

#include <ostream>

#include "analyzer/cli/output.h"
#include "analyzer/report/render.h"
#include "plugins/load/load.h"
#include "tracer/format/error.h"

namespace shardscope::cli {

int report(const std::vector<std::string>& paths, const std::string& format, const std::string& output, std::ostream& out, std::ostream& err, const std::string& step_pattern) {
  try {
    std::vector<std::filesystem::path> in(paths.begin(), paths.end());
    plugins::LoadResult loaded = plugins::load(in, {.progress = true, .step_pattern = step_pattern});
    print_warnings(loaded.warnings, err);
    report::Report r = report::build(loaded.trace, paths, loaded.warnings);
    std::string text;
    if (format == "json") text = report::render_json(r).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    else if (format == "html") text = report::render_html(r);
    else text = report::render_text(r, format == "md");
    return write_output(output, text, out, err) ? 0 : 2;
  } catch (const trace::TraceError& e) {
    err << "shardscope: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    err << "shardscope: error: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace shardscope::cli
