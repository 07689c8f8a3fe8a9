// The report's output formats. Each renders the same Report; none computes anything.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "analyzer/report/prefetch_render.h"
#include "analyzer/analysis/report.h"

namespace shardscope::report {

// Which ranks' and steps' tables the text, markdown and HTML reports show after the run summary (JSON holds
// everything): by default the worst rank's (the most exposed communication).
struct Selection {
  enum class Ranks : uint8_t { Worst, All, List };
  Ranks ranks = Ranks::Worst;
  size_t worst = 1;
  std::vector<int> list;
  std::vector<int64_t> steps;  // empty: every step
};
// `--ranks all|worst[:N]|LIST` and `--steps LIST` ("0,2,5-7"); throws std::invalid_argument naming the value.
Selection parse_selection(const std::string& ranks, const std::string& steps);
// The ranks a selection shows, in rank order; throws std::invalid_argument for a listed rank the run lacks.
// `worst_first`: the ranks worst first, for worst[:N] (default: the most exposed communication first).
std::vector<int> selected_ranks(const Report& r, const Selection& sel, const std::vector<int>* worst_first = nullptr);

std::string render_text(const Report& r, bool markdown, const Selection& sel = {});
nlohmann::json render_json(const Report& r);
// One self-contained HTML file: inline CSS and SVG, no script, no network. Every string that came from a
// trace (file, kernel and range names, reasons quoting them) is escaped.
std::string render_html(const Report& r);

std::string html_escape(std::string_view s);

}  // namespace shardscope::report
