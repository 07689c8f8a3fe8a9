#include "analyzer/report/diff_render.h"

#include <cmath>

#include <fmt/format.h>

#include "analyzer/report/collectives_render.h"
#include "analyzer/report/report_keys.h"
#include "analyzer/report/sentences.h"
#include "analyzer/report/table.h"

namespace shardscope::report {
namespace {

namespace k = report_keys;
using analysis::DiffRow;

// v, or 0 when it prints as zero with `decimals` places: never "-0.0".
double rounded(double v, int decimals) { return std::fabs(v) < 0.5 * std::pow(10.0, -decimals) ? 0.0 : v; }

std::string num(const std::optional<double>& v) { return v ? fmt::format("{:.3f}", rounded(*v, 3)) : ""; }
std::string delta(const DiffRow& r) {
  if (!r.a || !r.b) return "";
  std::string d = fmt::format("{:+.3f}", rounded(*r.b - *r.a, 3));
  if (std::fabs(*r.a) > 1e-12) d += fmt::format(" ({:+.1f}%)", rounded(100 * (*r.b - *r.a) / std::fabs(*r.a), 1));
  return d;
}

// "n/a: no steps" -> "n/a in A: no steps".
std::string in_run(const char* side, const std::string& why) {
  const std::string tail = why.rfind("n/a: ", 0) == 0 ? why.substr(5) : why.empty() ? "no value" : why;
  return fmt::format("n/a in {}: {}", side, tail);
}

// Why a side's value is missing: the collectives' code when the row has one, else the analysis's reason.
std::string why_a(const DiffRow& r) {
  return r.coll_na_a != metrics::CollectiveNa::None ? na_text(r.coll_na_a, r.kind) : na_text(r.na_a, r.kind);
}
std::string why_b(const DiffRow& r) {
  return r.coll_na_b != metrics::CollectiveNa::None ? na_text(r.coll_na_b, r.kind) : na_text(r.na_b, r.kind);
}

}  // namespace

// A row about one FSDP unit (diff.cc: "unit N all-gather hidden %").
static bool unit_row(const DiffRow& r) { return r.metric.rfind("unit ", 0) == 0; }

std::string diff_text(const analysis::RunDiff& d, const std::string& a_path, const std::string& b_path, bool units) {
  std::string text = fmt::format("shardscope diff: A = {}, B = {}\n", a_path, b_path);
  for (const analysis::RankDiff& rd : d.ranks) {
    text += fmt::format("\nrank {} (A) vs rank {} (B)\n", rd.rank_a, rd.rank_b);
    Table t{{"metric", "A", "B", "B - A"}, {}, 1};
    NaNotes na;
    for (const DiffRow& r : rd.rows)
      if (units || !unit_row(r))
        t.rows.push_back({r.metric, na.value_or(num(r.a), r.metric, "", in_run("A", why_a(r))),
                          na.value_or(num(r.b), r.metric, "", in_run("B", why_b(r))),
                          na.value_or(delta(r), r.metric, "", "n/a in B - A: needs both A and B")});
    text += t.render(false, "  ");
    for (const std::string& l : na.lines()) text += "  " + l + "\n";
    Table c{{"device activity (largest change)", "A ms", "B ms", "B - A ms"}, {}, 1};
    for (const analysis::DeviceChange& v : rd.largest_changes)
      c.rows.push_back({v.name.size() > 80 ? v.name.substr(0, 77) + "..." : v.name, fmt::format("{:.3f}", v.a_ns / 1e6),
                        fmt::format("{:.3f}", v.b_ns / 1e6), fmt::format("{:+.3f}", (v.b_ns - v.a_ns) / 1e6)});
    text += c.render(false, "  ");
  }
  return text;
}

nlohmann::json diff_json(const analysis::RunDiff& d, const std::string& a_path, const std::string& b_path, bool units) {
  nlohmann::json j;
  j[k::kSchema] = "shardscope.diff/1";
  j[k::kInputs] = {a_path, b_path};
  j[k::kRanks] = nlohmann::json::array();
  for (const analysis::RankDiff& rd : d.ranks) {
    nlohmann::json rj = {{"rank_a", rd.rank_a}, {"rank_b", rd.rank_b}};
    rj[k::kDiff] = nlohmann::json::array();
    for (const DiffRow& r : rd.rows) {
      if (!units && unit_row(r)) continue;
      nlohmann::json row = {{k::kMetric, r.metric},
                            {k::kA, r.a ? nlohmann::json(*r.a) : nlohmann::json(nullptr)},
                            {k::kB, r.b ? nlohmann::json(*r.b) : nlohmann::json(nullptr)}};
      if (!r.a) row[k::kNaA] = why_a(r);
      if (!r.b) row[k::kNaB] = why_b(r);
      rj[k::kDiff].push_back(row);
    }
    rj[k::kTopDevice] = nlohmann::json::array();
    for (const analysis::DeviceChange& v : rd.largest_changes)
      rj[k::kTopDevice].push_back({{k::kName, v.name}, {k::kA, v.a_ns}, {k::kB, v.b_ns}});
    j[k::kRanks].push_back(rj);
  }
  return j;
}

}  // namespace shardscope::report
