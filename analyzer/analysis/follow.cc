#include "analyzer/analysis/follow.h"

#include <algorithm>

#include "analyzer/analysis/follow_tail.h"
#include "analyzer/metrics/collectives.h"
#include "analyzer/metrics/instances.h"
#include "plugins/shardscope/shardscope_importer.h"
#include "tracer/format/error.h"
#include "tracer/format/json_get.h"
#include "tracer/format/keys.h"
#include "tracer/format/serialize.h"

namespace shardscope::analysis {
namespace {

bool is_step_record(const trace::Event& e) {
  return e.ph == 'X' && e.name == keys::kStepRange && e.cat == keys::kCatStep && e.args.is_object() &&
         e.args.contains(keys::kArgStep) && e.args[keys::kArgStep].is_number_integer();
}
int64_t step_number(const trace::Event& e) { return e.args[keys::kArgStep].get<int64_t>(); }

// The trace text of a header and events, as the writer lays it out: what the importer reads.
std::string trace_text(const nlohmann::json& header, const std::vector<trace::Event>& events) {
  std::string doc = "{\"";
  doc += keys::kShardscope;
  doc += "\":";
  doc += header.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  doc += ",\"";
  doc += keys::kTraceEvents;
  doc += "\":[";
  for (size_t i = 0; i < events.size(); ++i) {
    doc += i == 0 ? "\n" : ",\n";
    trace::append_event(doc, events[i]);
  }
  doc += "\n]}\n";
  return doc;
}

// The rank's collectives issued in its step `index`, as the straggler analysis takes them.
metrics::RankArrivals step_arrivals(model::Rank& rank, int32_t index) {
  std::vector<model::Track> all = rank.tracks;
  for (model::Track& t : rank.tracks)
    std::erase_if(t.events, [&](const model::Event& e) {
      return e.step != index || e.cls != model::IntervalClass::Communication || e.coll == model::CollectiveKind::None;
    });
  metrics::RankArrivals a = metrics::arrivals(rank, {rank.rank, uint64_t(rank.rank)});
  rank.tracks = std::move(all);
  return a;
}

}  // namespace

struct Follower::RankState {
  explicit RankState(const std::filesystem::path& p) : tail(p) {}
  TraceTail tail;
  int rank = -1;
  std::vector<trace::Event> keep;  // the events the unfinished steps may still need
  int64_t last_finished = INT64_MIN;
  bool all_finished = false;                          // the file is complete and every step in it finished
  std::map<int64_t, metrics::RankArrivals> arrivals;  // finished steps not yet handed out
};

Follower::Follower(std::filesystem::path dir, size_t max_without_steps)
    : dir_(std::move(dir)), max_without_steps_(max_without_steps) {}
Follower::~Follower() = default;

void Follower::find_files() {
  std::error_code ec;
  std::vector<std::filesystem::path> found;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    const std::string name = entry.path().filename().string();
    const bool trace = name.ends_with(".json") || name.ends_with(".json.gz");
    if (trace && entry.is_regular_file(ec)) found.push_back(entry.path());
  }
  std::sort(found.begin(), found.end());
  for (const auto& p : found)
    if (std::none_of(ranks_.begin(), ranks_.end(), [&](const auto& r) { return r->tail.path() == p; }))
      ranks_.push_back(std::make_unique<RankState>(p));
}

void Follower::take_events(RankState& r) {
  for (;;) {
    std::vector<trace::Event> got = r.tail.poll();
    if (r.rank < 0 && r.tail.header().is_object()) {
      // A header without its rank: the file's place among the job's files, as the loader numbers it.
      const auto at = std::find_if(ranks_.begin(), ranks_.end(), [&](const auto& x) { return x.get() == &r; });
      r.rank = int(trace::json_int_in(r.tail.header(), keys::kRank, 0, 1 << 30).value_or(at - ranks_.begin()));
      world_size_ =
          std::max(world_size_, int(trace::json_int_in(r.tail.header(), keys::kWorldSize, 1, 1 << 30).value_or(0)));
    }
    if (got.empty()) break;
    r.keep.insert(r.keep.end(), std::make_move_iterator(got.begin()), std::make_move_iterator(got.end()));
    // A file that is far ahead (a finished run, opened late) is measured chunk by chunk, so what is kept stays
    // a few steps' events, never the whole file's.
    finish_steps(r, 2);
  }
}

// Finishes every step in the rank's file but the last `keep_open`: the rank's kept events read as a trace,
// measured as `report` measures them, then the events no later step can need dropped.
void Follower::finish_steps(RankState& r, size_t keep_open) {
  size_t records = 0;
  for (const trace::Event& e : r.keep) records += is_step_record(e) ? 1 : 0;
  // Without step ranges nothing is ever finished and the kept events would grow with the file.
  if (records == 0 && r.keep.size() > max_without_steps_)
    throw trace::TraceError(r.tail.path().string(), 0,
                            "no \"step\" range in its first " + std::to_string(max_without_steps_) +
                                " events: following measures the steps the trainer or the tracer marks "
                                "(`report` finds other files' steps once the job is done)");
  if (records <= keep_open || r.rank < 0) return;
  std::string text = trace_text(r.tail.header(), r.keep);
  plugins::Input in{.path = r.tail.path().string(), .data = text.data(), .size = text.size()};
  model::Rank rank = plugins::ShardscopeImporter().read(std::move(in));
  const metrics::DeviceSets sets = metrics::device_sets(rank);
  const size_t finish = std::min(rank.steps.size(), records - keep_open);
  int64_t cut = INT64_MAX;
  for (size_t i = 0; i < finish; ++i) {
    const model::Step& s = rank.steps[i];
    FollowedStep& f = finished_[s.number];
    f.number = s.number;
    f.ranks.push_back({r.rank, s, metrics::measure(sets, s.start_ns, s.end_ns)});
    r.arrivals[s.number] = step_arrivals(rank, int32_t(i));
    r.last_finished = std::max(r.last_finished, s.number);
    cut = std::min(s.end_ns, s.host_end_ns);
  }
  // A later step's window starts at its first device activity, and a collective or kernel may run on past
  // the step that issued it: only what ended before the last finished step did can go.
  std::erase_if(r.keep, [&](const trace::Event& e) {
    if (e.ph == 'M') return false;
    if (is_step_record(e)) return step_number(e) <= r.last_finished;
    return e.ts_ns + (e.ph == 'X' ? e.dur_ns : 0) < cut;
  });
  if (r.tail.complete() && finish == records) r.all_finished = true;
}

std::vector<FollowedStep> Follower::ready() {
  std::vector<FollowedStep> out;
  const size_t expected = world_size_ > 0 ? size_t(world_size_) : ranks_.size();
  const bool all_files = !ranks_.empty() && ranks_.size() >= expected;
  while (all_files && !finished_.empty()) {
    FollowedStep& f = finished_.begin()->second;
    // Ready once no rank may still add to it: each rank finished it, or has finished past it, or is done.
    const bool wait = std::any_of(ranks_.begin(), ranks_.end(),
                                  [&](const auto& r) { return !r->all_finished && r->last_finished < f.number; });
    if (wait) break;
    std::sort(f.ranks.begin(), f.ranks.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
    metrics::InstanceTable table;
    for (auto& r : ranks_)
      if (auto it = r->arrivals.find(f.number); it != r->arrivals.end()) {
        table.add(std::move(it->second));
        r->arrivals.erase(it);
      }
    const metrics::Stragglers s = table.stragglers();
    f.instances = s.instances.size();
    for (const metrics::StragglerRank& sr : s.ranks) {
      if (sr.times_last > 0) f.times_last[sr.rank] = sr.times_last;
      if (sr.times_last > f.late_count) f.late_rank = sr.rank, f.late_count = sr.times_last;
    }
    out.push_back(std::move(f));
    finished_.erase(finished_.begin());
  }
  return out;
}

std::vector<FollowedStep> Follower::poll() {
  find_files();
  for (auto& r : ranks_) {
    if (r->all_finished) continue;
    take_events(*r);
    finish_steps(*r, r->tail.complete() ? 0 : 2);
    if (r->tail.complete() && !r->all_finished) r->all_finished = true;  // a rank with no steps left
  }
  return ready();
}

bool Follower::done() const {
  if (ranks_.empty() || ranks_.size() < size_t(world_size_) || !finished_.empty()) return false;
  return std::all_of(ranks_.begin(), ranks_.end(), [](const auto& r) { return r->all_finished; });
}

}  // namespace shardscope::analysis
