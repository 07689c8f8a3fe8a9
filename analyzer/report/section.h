// One part of the report (a metric's table, the run summary, the stragglers...) in every format: its text
// and markdown, its JSON and its HTML come from one Section, so the three renderers (render_text.cc,
// render_json.cc, render_html.cc) are only the page around the sections and a loop over them. A new metric
// is one Section in sections/ and one line in sections.cc's lists.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "analyzer/analysis/report.h"
#include "analyzer/analysis/run_summary.h"
#include "analyzer/report/render.h"
#include "analyzer/report/table.h"

namespace shardscope::report {

// What every section reads: the report, the selection and what follows from them, worked out once.
struct Context {
  const Report& report;
  const Selection& sel;
  const analysis::RunSummary& summary;
  const std::vector<int>& shown;  // the ranks whose details the text and HTML show, in rank order
  bool rank_shown(int rank) const { return std::binary_search(shown.begin(), shown.end(), rank); }

  // In a rank section (rank_sections()): the rank, and the steps its per-step rows show.
  const RankReport* rank = nullptr;
  std::vector<int64_t> steps;
  bool step_shown(int64_t step) const { return std::binary_search(steps.begin(), steps.end(), step); }
};

// The text report and the markdown one, written through the same calls. Every heading and paragraph is one
// line: a line break (or any control) that a file or event name brings into one is shown, not obeyed.
class TextOut {
 public:
  explicit TextOut(bool markdown) : md_(markdown) {}
  bool markdown() const { return md_; }
  void heading(int level, const std::string& raw);
  void para(const std::string& raw);
  void item(const std::string& raw);  // a line of a list: "- " in markdown
  // A table, then a line per reason its "n/a" cells have.
  void table(const Table& t, const NaNotes& na = {});
  // The table's legend (definitions.h), under it.
  void legend(const std::vector<std::string>& header);
  // The blank line that parts a rank's or a run-level part from the one before, in text (markdown's
  // headings part them already).
  void gap() { out_ += md_ ? "" : "\n"; }
  // Text already made for the format, appended as it is.
  void raw(const std::string& s) { out_ += s; }
  std::string take() { return std::move(out_); }

 private:
  bool md_;
  std::string out_;
};

class Section {
 public:
  virtual ~Section() = default;
  // A name for the section (the JSON key it writes, where it writes one).
  virtual std::string_view key() const = 0;
  virtual void text(const Context&, TextOut&) const {}
  // Adds the section's keys to `into`: the report's object, or a rank section's the rank's. The JSON's keys
  // are sorted, so the sections' order does not show in it.
  virtual void json(const Context&, nlohmann::json&) const {}
  virtual void html(const Context&, std::string&) const {}
};

// The run-level sections, in the order the text and HTML show them; one of them (sections/ranks.h) shows
// each rank's details through the rank sections, in their order.
const std::vector<const Section*>& run_sections();
const std::vector<const Section*>& rank_sections();

}  // namespace shardscope::report
