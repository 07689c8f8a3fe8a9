#include "viewer/model/ranks_overview.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "analyzer/analysis/reduce.h"
#include "analyzer/analysis/summary_file.h"

namespace shardscope::viewer {
namespace fs = std::filesystem;

namespace {

// A trace's or a summary's name without its extensions: what pairs trace.rank3.json.gz with trace.rank3.sqlite
// (`shardscope summarize` names a summary so).
std::string stem_of(const fs::path& p) {
  std::string n = p.filename().string();
  for (std::string_view ext : {".gz", ".json", ".sqlite"})
    if (n.size() > ext.size() && n.compare(n.size() - ext.size(), ext.size(), ext) == 0)
      n.resize(n.size() - ext.size());
  return n;
}

// Steady: completed, and not the first (warm-up) step when the rank has more than one (as the run summary).
bool steady(const report::RankReport& rr, size_t i) {
  return !rr.steps[i].step.aborted && (i > 0 || rr.steps.size() == 1);
}

RankOverviewRow row_of(const report::RankReport& rr, const metrics::Stragglers& st) {
  RankOverviewRow row;
  row.rank = rr.rank;
  row.source = rr.source;
  row.format = rr.format;
  row.steps = rr.steps.size();
  row.steps_na = rr.steps_na;
  metrics::WindowMetrics sum;
  std::vector<int64_t> windows;
  for (size_t i = 0; i < rr.steps.size(); ++i)
    if (steady(rr, i)) sum += rr.steps[i].m, windows.push_back(rr.steps[i].m.window_ns);
  row.steady_steps = windows.size();
  if (!windows.empty()) {
    std::sort(windows.begin(), windows.end());
    const size_t n = windows.size();
    row.step_ns = n % 2 ? windows[n / 2] : (windows[n / 2 - 1] + windows[n / 2]) / 2;
    row.compute_ns = sum.compute_ns / int64_t(n);
    row.comm_ns = sum.comm_ns / int64_t(n);
    row.exposed_ns = sum.exposed_ns() / int64_t(n);
    row.exposed_pct = sum.exposed_fraction_pct();
  }
  for (const metrics::StragglerRank& s : st.ranks)
    if (s.rank == rr.rank) row.times_last = s.times_last, row.max_late_ns = s.max_late_by_ns;
  row.prefetch = rr.prefetch.verdict;
  row.prefetch_checked =
      rr.prefetch.na == metrics::NotApplicable::None && rr.prefetch.verdict != metrics::Verdict::NotApplicable;
  row.hidden_share = rr.prefetch.steady_hidden_share();
  return row;
}

// Worst first for the prefetch column: not effective, then effective, then nothing checked.
int prefetch_rank(const RankOverviewRow& r) {
  if (!r.prefetch_checked) return 0;
  return r.prefetch == metrics::Verdict::NotEffective ? 2 : 1;
}

// The row's value in a column, as a number to sort by (absent values below every present one).
double key_of(const RankOverviewRow& r, OverviewColumn c) {
  auto opt = [](const auto& v) { return v ? double(*v) : -1.0; };
  switch (c) {
    case OverviewColumn::Rank: return r.rank;
    case OverviewColumn::StepTime: return opt(r.step_ns);
    case OverviewColumn::Compute: return opt(r.compute_ns);
    case OverviewColumn::Comm: return opt(r.comm_ns);
    case OverviewColumn::Exposed: return opt(r.exposed_ns);
    case OverviewColumn::ExposedPct: return opt(r.exposed_pct);
    case OverviewColumn::TimesLast: return double(r.times_last);
    case OverviewColumn::Prefetch:
      return prefetch_rank(r) * 2.0 - r.hidden_share;  // within a verdict, the least hidden first
  }
  return 0;
}

}  // namespace

std::vector<fs::path> SummaryInputs::files() const {
  std::vector<fs::path> out = summaries;
  out.insert(out.end(), unsummarised.begin(), unsummarised.end());
  return out;
}

std::optional<SummaryInputs> find_summaries(const std::vector<fs::path>& paths) {
  SummaryInputs in;
  std::vector<fs::path> traces;
  for (const fs::path& f : plugins::expand_inputs(paths)) {
    if (analysis::is_summary_file(f)) in.summaries.push_back(f);
    else
      traces.push_back(f);
  }
  if (in.summaries.empty()) return std::nullopt;
  std::set<std::pair<fs::path, std::string>> summarised;  // (directory, stem)
  for (const fs::path& s : in.summaries) summarised.insert({s.parent_path(), stem_of(s)});
  for (const fs::path& t : traces) {
    if (summarised.count({t.parent_path(), stem_of(t)})) ++in.paired;
    else
      in.unsummarised.push_back(t);
  }
  return in;
}

RanksOverview overview_of(const analysis::AnalysedRun& run) {
  RanksOverview o;
  o.inputs = run.inputs;
  o.warnings = run.warnings;
  o.failures = run.failures;
  o.prefetch = run.report.prefetch_verdict;
  o.instances = run.report.stragglers.instances.size();
  for (const model::Rank& r : run.trace.ranks) o.events_loaded += r.event_count();
  size_t most = 0;
  for (const report::RankReport& rr : run.report.ranks) {
    o.rows.push_back(row_of(rr, run.report.stragglers));
    if (o.rows.back().times_last > most) most = o.rows.back().times_last, o.straggler = rr.rank;
  }
  slowest_first(o.rows);
  return o;
}

RanksOverview open_overview(const SummaryInputs& inputs, plugins::LoadOptions options) {
  // A trace without a summary is read into memory to be summarised: one at a time, so that no more than one
  // rank's events are ever held.
  if (!inputs.unsummarised.empty()) options.threads = 1;
  options.keep_args = false;  // nothing here shows an event
  const std::vector<fs::path> files = inputs.files();
  std::vector<std::string> paths;
  for (const fs::path& f : files) paths.push_back(f.string());
  std::mutex mu;
  analysis::RunReducer reducer;
  std::vector<metrics::RankKey> keys;  // the reduce's report lists the ranks in this order, once sorted
  plugins::LoadResult loaded =
      analysis::summarize_each(paths, options, analysis::Scope::Everything, [&](analysis::RankSummary&& s) {
        std::lock_guard lock(mu);
        keys.push_back(s.key());
        reducer.add(std::move(s));
      });
  analysis::AnalysedRun run;
  run.inputs = paths;
  run.warnings = std::move(loaded.warnings);
  run.failures = std::move(loaded.failures);
  run.report = std::move(reducer).finish(paths, run.warnings, analysis::Scope::Everything);
  RanksOverview o = overview_of(run);
  std::sort(keys.begin(), keys.end());
  std::map<int, std::vector<uint64_t>> order_of;  // rank -> its files' places, in key order
  for (const metrics::RankKey& k : keys) order_of[k.rank].push_back(k.order);
  std::map<int, size_t> used;
  // Rows are re-sorted below, so pair them by rank, in key order, before that.
  std::vector<RankOverviewRow*> by_rank;
  for (RankOverviewRow& r : o.rows) by_rank.push_back(&r);
  std::stable_sort(by_rank.begin(), by_rank.end(),
                   [](const RankOverviewRow* a, const RankOverviewRow* b) { return a->rank < b->rank; });
  for (RankOverviewRow* r : by_rank) {
    auto it = order_of.find(r->rank);
    if (it == order_of.end()) continue;
    const size_t k = used[r->rank]++;
    if (k >= it->second.size()) continue;
    const uint64_t order = it->second[k];
    if (order < inputs.summaries.size()) r->summary = files[order].string();
  }
  return o;
}

void sort_rows(std::vector<RankOverviewRow>& rows, OverviewColumn column, bool descending) {
  std::stable_sort(rows.begin(), rows.end(), [&](const RankOverviewRow& a, const RankOverviewRow& b) {
    const double ka = key_of(a, column), kb = key_of(b, column);
    if (ka != kb) return descending ? ka > kb : ka < kb;
    return a.rank < b.rank;
  });
}

void slowest_first(std::vector<RankOverviewRow>& rows) {
  std::stable_sort(rows.begin(), rows.end(), [](const RankOverviewRow& a, const RankOverviewRow& b) {
    if (a.times_last != b.times_last) return a.times_last > b.times_last;
    const int64_t sa = a.step_ns.value_or(-1), sb = b.step_ns.value_or(-1);
    if (sa != sb) return sa > sb;
    return a.rank < b.rank;
  });
}

TraceLookup trace_of(const RankOverviewRow& row) {
  TraceLookup out;
  std::error_code ec;
  auto is_file = [&](const fs::path& p) { return !p.empty() && fs::is_regular_file(p, ec); };
  if (row.summary.empty()) {  // a trace summarised on the way: the row is its own trace
    if (is_file(row.source)) out.path = row.source, out.note = "the trace itself";
    else
      out.note = fmt::format("{} is no longer there", row.source);
    return out;
  }
  std::vector<fs::path> looked;
  if (!row.source.empty()) {
    if (is_file(row.source)) {
      out.path = row.source;
      out.note = fmt::format("the trace the summary {} was made from", row.summary);
      return out;
    }
    looked.push_back(row.source);
  }
  const fs::path dir = fs::path(row.summary).parent_path();
  const std::string stem = stem_of(row.summary);
  std::vector<fs::path> beside{dir / (stem + ".json.gz"), dir / (stem + ".json"), dir / (stem + ".gz")};
  if (!row.source.empty()) beside.push_back(dir / fs::path(row.source).filename());
  for (const fs::path& p : beside) {
    if (std::find(looked.begin(), looked.end(), p) != looked.end()) continue;
    if (is_file(p)) {
      out.path = p;
      out.note = fmt::format("the trace beside its summary {} ({} is not there)", row.summary, row.source);
      return out;
    }
    looked.push_back(p);
  }
  std::string where;
  for (const fs::path& p : looked) where += (where.empty() ? "" : ", ") + p.string();
  out.note = fmt::format("rank {}'s trace was not found: its summary {} records {}; looked at {}", row.rank,
                         row.summary, row.source.empty() ? "no trace" : row.source, where);
  return out;
}

}  // namespace shardscope::viewer
