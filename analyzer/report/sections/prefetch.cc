#include "analyzer/report/sections/prefetch.h"

#include <fmt/format.h>

#include "analyzer/report/html_parts.h"
#include "analyzer/report/prefetch_render.h"
#include "analyzer/report/report_keys.h"

namespace shardscope::report {
namespace {

namespace k = report_keys;

class Prefetch final : public Section {
 public:
  std::string_view key() const override { return k::kPrefetch; }

  void text(const Context& c, TextOut& out) const override {
    const metrics::RankPrefetch& p = c.rank->prefetch;
    out.para(fmt::format("backward prefetch (configured: {}): {}", p.configured.empty() ? "unknown" : p.configured,
                         run_sentence(p)));
    if (p.na != metrics::NotApplicable::None) return;
    if (p.unit_identity != model::UnitIdentity::Named) out.para("units: " + unit_identity_sentence(p.unit_identity));
    for (const metrics::StepPrefetch& s : p.steps)
      if (c.step_shown(s.step))
        out.para(fmt::format("step {}: {}", s.step, step_sentence(s, p, step_window_ns(c.rank->steps, s.step))));
  }

  void json(const Context& c, nlohmann::json& o) const override {
    o[k::kPrefetch] = prefetch_json(c.rank->prefetch, c.rank->steps);
  }

  // Each shown step's sentence, folding its per-unit table where it has one.
  void html(const Context& c, std::string& h) const override {
    const metrics::RankPrefetch& p = c.rank->prefetch;
    h += "<h3>Backward prefetch</h3>\n";
    h += fmt::format("<p>configured: {}; verdict: <span class=\"{}\">{}</span></p>\n",
                     html_escape(p.configured.empty() ? "unknown" : p.configured),
                     p.verdict == metrics::Verdict::Effective ? "good" : "bad", html_escape(run_sentence(p)));
    if (p.na != metrics::NotApplicable::None) return;
    if (p.unit_identity != model::UnitIdentity::Named)
      h += "<p>units: " + html_escape(unit_identity_sentence(p.unit_identity)) + "</p>\n";
    for (const metrics::StepPrefetch& s : p.steps) {
      if (!c.step_shown(s.step)) continue;
      const Table t = unit_table(s);
      const std::string said = "step " + html_escape(std::to_string(s.step)) + ": " +
                               html_escape(step_sentence(s, p, step_window_ns(c.rank->steps, s.step)));
      if (t.rows.empty()) {
        h += "<p>" + said + "</p>\n";
        continue;
      }
      h += "<details><summary>" + said + "</summary>\n<table><tr>";
      for (const std::string& col : t.header) h += "<th>" + html_escape(col) + "</th>";
      h += "</tr>\n";
      for (const std::vector<std::string>& row : t.rows) {
        h += "<tr>";
        for (size_t i = 0; i < row.size(); ++i) h += html::td(row[i], i >= 2 && i <= 5);  // the four numbers
        h += "</tr>\n";
      }
      h += "</table></details>\n";
    }
  }
};

}  // namespace

const Section& prefetch_section() {
  static const Prefetch s;
  return s;
}

}  // namespace shardscope::report
