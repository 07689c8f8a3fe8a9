#include "analyzer/cli/diff.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analyzer/cli/output.h"
#include "analyzer/report/report.h"
#include "analyzer/report/report_keys.h"
#include "analyzer/report/table.h"
#include "plugins/load/load.h"
#include "tracer/format/keys.h"

namespace shardscope::cli {
namespace {

namespace k = keys::report;
namespace rk = report::report_keys;

struct Row {
  std::string metric;
  std::optional<double> a, b;
  std::string na_a, na_b;  // why a side is missing
};

std::string num(const std::optional<double>& v) { return v ? fmt::format("{:.3f}", *v) : ""; }
std::string delta(const Row& r) {
  if (!r.a || !r.b) return "";
  std::string d = fmt::format("{:+.3f}", *r.b - *r.a);
  if (std::fabs(*r.a) > 1e-12) d += fmt::format(" ({:+.1f}%)", 100 * (*r.b - *r.a) / std::fabs(*r.a));
  return d;
}

// "n/a: no steps" -> "n/a in A: no steps".
std::string in_run(const char* side, const std::string& why) {
  const std::string tail = why.rfind("n/a: ", 0) == 0 ? why.substr(5) : why.empty() ? "no value" : why;
  return fmt::format("n/a in {}: {}", side, tail);
}

std::map<std::string, std::pair<int64_t, int64_t>> device_time_by_name(const model::Rank& r) {
  std::map<std::string, std::pair<int64_t, int64_t>> by;
  for (const model::Track& t : r.tracks)
    for (const model::Event& e : t.events)
      if (e.is_device() && e.ph == 'X') {
        auto& [count, ns] = by[std::string(r.str(e.name))];
        ++count;
        ns += e.dur_ns;
      }
  return by;
}

std::vector<Row> metric_rows(const report::RankReport& a, const report::RankReport& b) {
  std::vector<Row> rows;
  // A row, with each side's reason where its value is missing.
  auto add = [&](std::string metric, std::optional<double> va, std::optional<double> vb, std::string why_a, std::string why_b) {
    rows.push_back({std::move(metric), va, vb, va ? "" : std::move(why_a), vb ? "" : std::move(why_b)});
  };
  auto whole = [](const report::RankReport& r, auto f) -> std::optional<double> { return r.whole ? std::optional<double>(f(*r.whole)) : std::nullopt; };
  auto whole_na = [](const report::RankReport& r) { return r.whole_na; };
  auto overlap_na = [](const report::RankReport& r) { return r.whole ? report::na_overlap() : r.whole_na; };
  add("whole-trace window ms", whole(a, [](auto& w) { return w.window_us / 1e3; }), whole(b, [](auto& w) { return w.window_us / 1e3; }), whole_na(a), whole_na(b));
  add("whole-trace overlap %", a.whole ? a.whole->overlap_pct() : std::nullopt, b.whole ? b.whole->overlap_pct() : std::nullopt, overlap_na(a), overlap_na(b));
  add("whole-trace idle %", whole(a, [](auto& w) { return w.idle_pct(); }), whole(b, [](auto& w) { return w.idle_pct(); }), whole_na(a), whole_na(b));
  add("whole-trace compute %", whole(a, [](auto& w) { return w.compute_pct(); }), whole(b, [](auto& w) { return w.compute_pct(); }), whole_na(a), whole_na(b));
  add("whole-trace non-compute %", whole(a, [](auto& w) { return w.non_compute_pct(); }), whole(b, [](auto& w) { return w.non_compute_pct(); }), whole_na(a),
      whole_na(b));
  auto per_step = [](const report::RankReport& r, int64_t metrics::WindowMetrics::*field) -> std::optional<double> {
    if (r.steps.empty()) return std::nullopt;
    return double(r.all_steps.*field) / 1e6 / double(r.steps.size());
  };
  auto per_step_f = [](const report::RankReport& r, int64_t (metrics::WindowMetrics::*f)() const) -> std::optional<double> {
    if (r.steps.empty()) return std::nullopt;
    return double((r.all_steps.*f)()) / 1e6 / double(r.steps.size());
  };
  const std::string sa = a.steps_na, sb = b.steps_na;
  add("steps", a.steps.empty() ? std::nullopt : std::optional<double>(double(a.steps.size())),
      b.steps.empty() ? std::nullopt : std::optional<double>(double(b.steps.size())), sa, sb);
  add("mean step time ms", per_step(a, &metrics::WindowMetrics::window_ns), per_step(b, &metrics::WindowMetrics::window_ns), sa, sb);
  add("mean compute ms / step", per_step(a, &metrics::WindowMetrics::compute_ns), per_step(b, &metrics::WindowMetrics::compute_ns), sa, sb);
  add("mean communication ms / step", per_step(a, &metrics::WindowMetrics::comm_ns), per_step(b, &metrics::WindowMetrics::comm_ns), sa, sb);
  add("mean exposed comm ms / step", per_step_f(a, &metrics::WindowMetrics::exposed_ns), per_step_f(b, &metrics::WindowMetrics::exposed_ns), sa, sb);
  add("mean idle ms / step", per_step_f(a, &metrics::WindowMetrics::idle_ns), per_step_f(b, &metrics::WindowMetrics::idle_ns), sa, sb);
  auto steps_overlap_na = [](const report::RankReport& r) { return r.steps.empty() ? r.steps_na : std::string("n/a: no communication in any step"); };
  add("all-steps overlap %", a.steps.empty() ? std::nullopt : a.all_steps.overlap_pct(), b.steps.empty() ? std::nullopt : b.all_steps.overlap_pct(),
      steps_overlap_na(a), steps_overlap_na(b));
  std::map<model::CollectiveKind, std::pair<const metrics::CollectiveStats*, const metrics::CollectiveStats*>> coll;
  for (const auto& c : a.collectives) coll[c.kind].first = &c;
  for (const auto& c : b.collectives) coll[c.kind].second = &c;
  for (auto& [kind, p] : coll) {
    std::string n(model::to_string(kind));
    auto count = [](const metrics::CollectiveStats* c) { return c ? std::optional<double>(double(c->count)) : std::optional<double>(0.0); };
    auto time = [](const metrics::CollectiveStats* c) { return c ? std::optional<double>(c->time_ns / 1e6) : std::optional<double>(0.0); };
    auto bus = [](const metrics::CollectiveStats* c) { return c ? c->busbw_gbps() : std::nullopt; };
    auto bus_na = [&](const metrics::CollectiveStats* c) { return c ? c->busbw_na() : "n/a: no " + n + " in this run"; };
    add(n + " count", count(p.first), count(p.second), "", "");
    add(n + " time ms", time(p.first), time(p.second), "", "");
    add(n + " busbw GB/s", bus(p.first), bus(p.second), bus_na(p.first), bus_na(p.second));
  }
  // FSDP units: the mean hidden share of each unit's backward all-gather.
  auto unit_share = [](const report::RankReport& r) {
    std::map<int, std::pair<double, int>> m;
    for (const auto& s : r.prefetch.steps)
      for (const auto& u : s.units) m[u.next_unit].first += u.hidden_share(), ++m[u.next_unit].second;
    return m;
  };
  auto ua = unit_share(a), ub = unit_share(b);
  std::map<int, int> units;
  for (auto& [u, v] : ua) units[u] = 0;
  for (auto& [u, v] : ub) units[u] = 0;
  for (auto& [u, unused] : units) {
    auto get = [&](auto& m) -> std::optional<double> {
      auto it = m.find(u);
      return it == m.end() ? std::nullopt : std::optional<double>(100 * it->second.first / it->second.second);
    };
    add(fmt::format("unit {} all-gather hidden %", u), get(ua), get(ub), "n/a: the prefetch check found no backward all-gather of this unit in this run",
        "n/a: the prefetch check found no backward all-gather of this unit in this run");
  }
  return rows;
}

}  // namespace

int diff(const std::string& a_path, const std::string& b_path, const std::string& format, std::ostream& out, std::ostream& err, const std::string& step_pattern) {
  try {
    const plugins::LoadOptions opts{.progress = true, .step_pattern = step_pattern};
    plugins::LoadResult la = plugins::load({a_path}, opts), lb = plugins::load({b_path}, opts);
    print_warnings(la.warnings, err);
    print_warnings(lb.warnings, err);
    report::Report ra = report::build(la.trace, {a_path}, la.warnings), rb = report::build(lb.trace, {b_path}, lb.warnings);
    // Pair ranks by number; two single-rank traces of different ranks are still the same position.
    std::vector<std::pair<size_t, size_t>> pairs;
    if (ra.ranks.size() == 1 && rb.ranks.size() == 1) pairs.push_back({0, 0});
    else
      for (size_t i = 0; i < ra.ranks.size(); ++i)
        for (size_t j = 0; j < rb.ranks.size(); ++j)
          if (ra.ranks[i].rank == rb.ranks[j].rank) pairs.push_back({i, j});
    if (pairs.empty()) {
      err << "shardscope: error: the two runs have no rank in common\n";
      return 2;
    }
    nlohmann::json j;
    j[k::kSchema] = "shardscope.diff/1";
    j[k::kInputs] = {a_path, b_path};
    j[k::kRanks] = nlohmann::json::array();
    std::string text = fmt::format("shardscope diff: A = {}, B = {}\n", a_path, b_path);
    for (auto [i, jx] : pairs) {
      const report::RankReport &a = ra.ranks[i], &b = rb.ranks[jx];
      std::vector<Row> rows = metric_rows(a, b);
      // The device activities whose total time changed most.
      auto ta = device_time_by_name(la.trace.ranks[i]), tb = device_time_by_name(lb.trace.ranks[jx]);
      std::map<std::string, std::pair<int64_t, int64_t>> both;
      for (auto& [n, v] : ta) both[n].first = v.second;
      for (auto& [n, v] : tb) both[n].second = v.second;
      std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> changed(both.begin(), both.end());
      std::sort(changed.begin(), changed.end(), [](auto& x, auto& y) { return std::llabs(x.second.second - x.second.first) > std::llabs(y.second.second - y.second.first); });
      if (changed.size() > 10) changed.resize(10);

      text += fmt::format("\nrank {} (A) vs rank {} (B)\n", a.rank, b.rank);
      report::Table t{{"metric", "A", "B", "B - A"}, {}, 1};
      nlohmann::json rj = {{"rank_a", a.rank}, {"rank_b", b.rank}};
      rj[k::kDiff] = nlohmann::json::array();
      report::NaNotes na;
      for (const Row& r : rows) {
        t.rows.push_back({r.metric, na.value_or(num(r.a), r.metric, "", in_run("A", r.na_a)), na.value_or(num(r.b), r.metric, "", in_run("B", r.na_b)),
                          na.value_or(delta(r), r.metric, "", "n/a in B - A: needs both A and B")});
        nlohmann::json row = {{k::kMetric, r.metric}, {k::kA, r.a ? nlohmann::json(*r.a) : nlohmann::json(nullptr)}, {k::kB, r.b ? nlohmann::json(*r.b) : nlohmann::json(nullptr)}};
        if (!r.a) row[rk::kNaA] = r.na_a;
        if (!r.b) row[rk::kNaB] = r.na_b;
        rj[k::kDiff].push_back(row);
      }
      text += t.render(false, "  ");
      for (const std::string& l : na.lines()) text += "  " + l + "\n";
      report::Table d{{"device activity (largest change)", "A ms", "B ms", "B - A ms"}, {}, 1};
      rj[k::kTopDevice] = nlohmann::json::array();
      for (auto& [n, v] : changed) {
        d.rows.push_back({n.size() > 80 ? n.substr(0, 77) + "..." : n, fmt::format("{:.3f}", v.first / 1e6), fmt::format("{:.3f}", v.second / 1e6),
                          fmt::format("{:+.3f}", (v.second - v.first) / 1e6)});
        rj[k::kTopDevice].push_back({{k::kName, n}, {k::kA, v.first}, {k::kB, v.second}});
      }
      text += d.render(false, "  ");
      j[k::kRanks].push_back(rj);
    }
    std::string s = format == "json" ? j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n" : text;
    return write_output("-", s, out, err) ? 0 : 2;
  } catch (const std::exception& e) {
    err << "shardscope: error: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace shardscope::cli
