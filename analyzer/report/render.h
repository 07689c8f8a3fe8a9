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
  std::vector<int64_t> steps;  // empty: every step (with --steps all) or, by default, the `max_steps` slowest
  // No --steps given: each rank's per-step rows (tables and prefetch sentences) are its `max_steps` slowest
  // steps, and its top device activity its `max_top_device` longest, so the default report stays short at
  // any step count; a line says what was left out and how to see it.
  bool bounded = true;
  size_t max_steps = 2, max_top_device = 3;
  // Neither --ranks nor --steps: the short report, whose run-level details (the links table, how the memory
  // model predicted) the summary lines stand for.
  bool is_default() const { return bounded && ranks == Ranks::Worst && worst == 1; }
};
// `--ranks all|worst[:N]|LIST` and `--steps LIST` ("0,2,5-7"); throws std::invalid_argument naming the value.
Selection parse_selection(const std::string& ranks, const std::string& steps);
// The ranks a selection shows, in rank order; throws std::invalid_argument for a listed rank the run lacks.
// `worst_first`: the ranks worst first, for worst[:N] (default: the most exposed communication first).
std::vector<int> selected_ranks(const Report& r, const Selection& sel, const std::vector<int>* worst_first = nullptr);
// The step numbers of a rank's per-step rows the selection shows, in step order: those listed, every step
// with --steps all, or by default the `max_steps` slowest steady ones (the longest window, the earlier step on
// a tie; the warm-up step 0, always slow, only when there are too few others).
std::vector<int64_t> selected_steps(const RankReport& rr, const Selection& sel);
// What a rank's tables leave out of its steps and how to see them ("the 2 slowest of 5; ..."); "" when nothing.
std::string steps_left_out(const RankReport& rr, const std::vector<int64_t>& shown, const Selection& sel);

std::string render_text(const Report& r, bool markdown, const Selection& sel = {});
nlohmann::json render_json(const Report& r);
// One self-contained HTML file: inline CSS and SVG, no script, no network; the run summary, the bars and
// the distributions across ranks cover every rank, the folded details the selected ranks and steps. Every string that came from a
// trace (file, kernel and range names, reasons quoting them) is escaped.
std::string render_html(const Report& r, const Selection& sel = {});

std::string html_escape(std::string_view s);

}  // namespace shardscope::report
