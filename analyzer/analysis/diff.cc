#include "analyzer/analysis/diff.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "analyzer/analysis/diff_fields.h"
#include "model/saturating.h"

namespace shardscope::analysis {
namespace {

std::vector<DiffRow> metric_rows(const report::RankReport& a, const report::RankReport& b) {
  std::vector<DiffRow> rows;
  // A row, with each side's reason where its value is missing.
  auto add = [&](std::string metric, std::optional<double> va, std::optional<double> vb, Na why_a, Na why_b) {
    rows.push_back({std::move(metric), va, vb, va ? Na::None : why_a, vb ? Na::None : why_b});
  };
  // The whole-trace line, row by row as declared (diff_fields.h).
  for (const auto& row : DiffFields<metrics::HtaBreakdown>::rows) {
    auto value = [&](const report::RankReport& r) { return r.whole ? row.value(*r.whole) : std::nullopt; };
    auto na = [&](const report::RankReport& r) { return r.whole ? row.na_when_empty : r.whole_na; };
    add(row.label, value(a), value(b), na(a), na(b));
  }
  // Means over the steps all_steps sums: the completed ones (an aborted step is left out of both).
  auto completed = [](const report::RankReport& r) { return r.steps.size() - r.aborted_steps.size(); };
  auto per_step = [&](const report::RankReport& r, const DiffQuantity<metrics::WindowMetrics>& row) {
    std::optional<double> ns = completed(r) == 0 ? std::nullopt : row.value(r.all_steps);
    return ns ? std::optional<double>(*ns / 1e6 / double(completed(r))) : std::nullopt;
  };
  const Na sa = a.steps_na, sb = b.steps_na;
  add("steps", a.steps.empty() ? std::nullopt : std::optional<double>(double(a.steps.size())),
      b.steps.empty() ? std::nullopt : std::optional<double>(double(b.steps.size())), sa, sb);
  for (const auto& row : DiffFields<metrics::WindowMetrics>::rows)
    add(row.label, per_step(a, row), per_step(b, row), sa, sb);
  auto steps_overlap_na = [](const report::RankReport& r) {
    return r.steps.empty() ? r.steps_na : Na::NoCommunicationInAnySteps;
  };
  add("all-steps overlap %", a.steps.empty() ? std::nullopt : a.all_steps.overlap_pct(),
      b.steps.empty() ? std::nullopt : b.all_steps.overlap_pct(), steps_overlap_na(a), steps_overlap_na(b));
  std::map<model::CollectiveKind, std::pair<const metrics::CollectiveStats*, const metrics::CollectiveStats*>> coll;
  for (const auto& c : a.collectives) coll[c.kind].first = &c;
  for (const auto& c : b.collectives) coll[c.kind].second = &c;
  for (auto& [kind, p] : coll) {
    std::string n(model::to_string(kind));
    auto count = [](const metrics::CollectiveStats* c) {
      return c ? std::optional<double>(double(c->count)) : std::optional<double>(0.0);
    };
    auto time = [](const metrics::CollectiveStats* c) {
      return c ? std::optional<double>(c->time_ns / 1e6) : std::optional<double>(0.0);
    };
    auto bus = [](const metrics::CollectiveStats* c) { return c ? c->busbw_gbps() : std::nullopt; };
    auto bus_na = [&](const metrics::CollectiveStats* c) { return c ? Na::None : Na::KindNotInRun; };
    add(n + " count", count(p.first), count(p.second), Na::None, Na::None);
    add(n + " time ms", time(p.first), time(p.second), Na::None, Na::None);
    add(n + " busbw GB/s", bus(p.first), bus(p.second), bus_na(p.first), bus_na(p.second));
    DiffRow& busbw = rows.back();
    busbw.kind = kind;
    if (p.first && !busbw.a) busbw.coll_na_a = p.first->busbw_na();
    if (p.second && !busbw.b) busbw.coll_na_b = p.second->busbw_na();
  }
  // FSDP units: the mean hidden share of each unit's backward all-gather.
  auto unit_share = [](const report::RankReport& r) {
    std::map<int, std::pair<double, int>> m;
    for (const auto& s : r.prefetch.steps)
      if (!s.aborted)
        for (const auto& u : s.units) m[u.next_unit].first += u.hidden_share(), ++m[u.next_unit].second;
    return m;
  };
  auto ua = unit_share(a), ub = unit_share(b);
  std::map<int, int> units;
  for (auto& [u, v] : ua) units[u] = 0;
  for (auto& [u, v] : ub) units[u] = 0;
  for (const auto& entry : units) {
    const int u = entry.first;  // a plain name: clang 14 (the fuzz build's) captures no structured binding
    auto get = [&](auto& m) -> std::optional<double> {
      auto it = m.find(u);
      return it == m.end() ? std::nullopt : std::optional<double>(100 * it->second.first / it->second.second);
    };
    add(fmt::format("unit {} all-gather hidden %", u), get(ua), get(ub), Na::UnitNotChecked, Na::UnitNotChecked);
  }
  return rows;
}

// |b − a| exact as uint64: saturated totals may lie a whole int64 range apart.
uint64_t change(const DeviceChange& c) {
  return c.b_ns >= c.a_ns ? uint64_t(c.b_ns) - uint64_t(c.a_ns) : uint64_t(c.a_ns) - uint64_t(c.b_ns);
}

}  // namespace

RunDiff diff_runs(const AnalysedRun& ra, const AnalysedRun& rb) {
  RunDiff out;
  const report::Report &a = ra.report, &b = rb.report;
  std::vector<std::pair<size_t, size_t>> pairs;
  if (a.ranks.size() == 1 && b.ranks.size() == 1) pairs.push_back({0, 0});
  else
    for (size_t i = 0; i < a.ranks.size(); ++i)
      for (size_t j = 0; j < b.ranks.size(); ++j)
        if (a.ranks[i].rank == b.ranks[j].rank) pairs.push_back({i, j});
  for (auto [i, j] : pairs) {
    RankDiff d;
    d.index_a = i, d.index_b = j;
    d.rank_a = a.ranks[i].rank, d.rank_b = b.ranks[j].rank;
    d.rows = metric_rows(a.ranks[i], b.ranks[j]);
    std::map<std::string, std::pair<int64_t, int64_t>> both;
    if (i < ra.device_time.size())
      for (auto& [n, ns] : ra.device_time[i]) both[n].first = ns;
    if (j < rb.device_time.size())
      for (auto& [n, ns] : rb.device_time[j]) both[n].second = ns;
    for (auto& [n, v] : both) d.largest_changes.push_back({n, v.first, v.second});
    std::sort(d.largest_changes.begin(), d.largest_changes.end(),
              [](const DeviceChange& x, const DeviceChange& y) { return change(x) > change(y); });
    if (d.largest_changes.size() > kLargestChanges) d.largest_changes.resize(kLargestChanges);
    out.ranks.push_back(std::move(d));
  }
  return out;
}

}  // namespace shardscope::analysis
