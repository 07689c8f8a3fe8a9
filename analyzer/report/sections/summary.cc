#include "analyzer/report/sections/summary.h"

#include <cstdint>

#include <fmt/format.h>

#include "analyzer/report/report_keys.h"
#include "analyzer/report/sentences.h"
#include "analyzer/report/summary_render.h"

namespace shardscope::report {
namespace {

namespace k = report_keys;

// Which ranks' details follow, when not every rank's: at most `listed` ranges of ranks named (the HTML keeps the line short).
std::string details_below(const Context& c, size_t listed) {
  return fmt::format("rank{} {} ({}); --ranks all, worst:N or a list for others, --format json for everything",
                     c.shown.size() == 1 ? "" : "s", analysis::rank_ranges(c.shown, listed),
                     c.sel.ranks == Selection::Ranks::Worst ? "the most exposed communication" : "as selected");
}

class Summary final : public Section {
 public:
  std::string_view key() const override { return k::kSummary; }

  void text(const Context& c, TextOut& out) const override {
    for (const std::string& l : summary_lines(c.summary)) out.item(l);
    if (out.markdown()) out.raw("\n");
    for (const std::string& w : report_warnings(c.report)) out.para("warning: " + w);
    for (const std::string& n : report_notes(c.report)) out.para("note: " + n);
    if (c.shown.size() < c.report.ranks.size()) out.para("details below: " + details_below(c, SIZE_MAX));
  }

  void json(const Context& c, nlohmann::json& into) const override {
    into[k::kWarnings] = report_warnings(c.report);
    into[k::kNotes] = report_notes(c.report);
    into[k::kSummary] = summary_json(c.summary);
  }

  void html(const Context& c, std::string& h) const override {
    h += "<ul class=\"summary\">\n";
    for (const std::string& l : summary_lines(c.summary)) {
      // The prefetch verdict in colour: the line a reader looks for first.
      const bool prefetch = l.rfind("backward prefetch:", 0) == 0;
      const char* cls = !prefetch                                              ? ""
                        : c.summary.prefetch == metrics::Verdict::Effective    ? " class=\"good\""
                        : c.summary.prefetch == metrics::Verdict::NotEffective ? " class=\"bad\""
                                                                               : "";
      h += fmt::format("<li{}>{}</li>\n", cls, html_escape(l));
    }
    h += "</ul>\n";
    for (const std::string& w : report_warnings(c.report))
      h += "<p class=\"warn\">warning: " + html_escape(w) + "</p>\n";
    for (const std::string& n : report_notes(c.report)) h += "<p class=\"warn\">note: " + html_escape(n) + "</p>\n";
    if (c.shown.size() < c.report.ranks.size())
      h += "<p>" + html_escape("Details below: " + details_below(c, 20)) + "</p>\n";
  }
};

}  // namespace

const Section& summary_section() {
  static const Summary s;
  return s;
}

}  // namespace shardscope::report
