// The report's output formats. Each renders the same Report; none computes anything.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "analyzer/report/prefetch_render.h"
#include "analyzer/analysis/report.h"

namespace shardscope::report {

std::string render_text(const Report& r, bool markdown);
nlohmann::json render_json(const Report& r);
// One self-contained HTML file: inline CSS and SVG, no script, no network. Every string that came from a
// trace (file, kernel and range names, reasons quoting them) is escaped.
std::string render_html(const Report& r);

std::string html_escape(std::string_view s);

}  // namespace shardscope::report
