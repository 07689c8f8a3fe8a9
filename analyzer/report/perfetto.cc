#include "analyzer/report/perfetto.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analyzer/metrics/breakdown.h"
#include "analyzer/metrics/prefetch.h"
#include "analyzer/report/prefetch_render.h"

namespace shardscope::report {

struct PerfettoWriter::Place {
  int64_t pid = 0;
  metrics::ClockMap clock;
  int64_t origin_ns = 0;
  // A trace time as the file's microseconds: on the wall clock, from the origin, to the nanosecond.
  std::string ts(int64_t trace_ns) const { return us(clock.to_realtime(trace_ns) - origin_ns); }
  static std::string us(int64_t ns) {
    const uint64_t mag = ns < 0 ? uint64_t(0) - uint64_t(ns) : uint64_t(ns);
    return fmt::format("{}{}.{:03}", ns < 0 ? "-" : "", mag / 1000, mag % 1000);
  }
};

namespace {

// A JSON string: escaped, and any byte that is not UTF-8 replaced (names come from untrusted traces).
std::string json_string(std::string_view s) {
  return nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// a minus b, both unions (sorted, disjoint).
metrics::IntervalSet subtract(const metrics::IntervalSet& a, const metrics::IntervalSet& b) {
  metrics::IntervalSet out;
  size_t j = 0;
  for (metrics::Interval i : a) {
    while (j < b.size() && b[j].end <= i.start) ++j;
    for (size_t k = j; k < b.size() && b[k].start < i.end; ++k) {
      if (b[k].start > i.start) out.push_back({i.start, b[k].start});
      i.start = std::max(i.start, b[k].end);
      if (i.start >= i.end) break;
    }
    if (i.start < i.end) out.push_back(i);
  }
  return out;
}

std::string track_name(const model::Track& t, size_t index) {
  if (!t.name.empty()) return t.name;
  const char* kind = t.kind == model::TrackKind::HostThread     ? "thread"
                     : t.kind == model::TrackKind::DeviceStream ? "stream"
                                                                : "communication";
  return fmt::format("{} {}", kind, index);
}

}  // namespace

PerfettoWriter::PerfettoWriter(std::ostream& out, const metrics::InstanceTable& table, int64_t origin_ns)
    : out_(out), table_(table), origin_ns_(origin_ns) {
  out_ << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
}

void PerfettoWriter::event(const std::string& json) {
  if (!first_) out_ << ",\n";
  first_ = false;
  out_ << json;
}

void PerfettoWriter::rank(const model::Rank& rank, uint64_t order) {
  const Place at{rank.rank, metrics::ClockMap(rank.clock_sync), origin_ns_};
  event(fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":{}}}}})", at.pid,
                    json_string(fmt::format("rank {}", rank.rank))));
  event(fmt::format(R"({{"ph":"M","name":"process_sort_index","pid":{},"tid":0,"args":{{"sort_index":{}}}}})", at.pid,
                    rank.rank));
  int sort = -3;  // the findings first, in this order
  for (auto [tid, name] :
       {std::pair{kStepsTid, kStepsTrack}, {kExposedTid, kExposedTrack}, {kPrefetchTid, kPrefetchTrack}}) {
    event(fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":{}}}}})", at.pid, tid,
                      json_string(name)));
    event(fmt::format(R"({{"ph":"M","name":"thread_sort_index","pid":{},"tid":{},"args":{{"sort_index":{}}}}})", at.pid,
                      tid, sort++));
  }
  tracks(rank, at);
  steps_and_exposed(rank, at);
  const metrics::RankKey key{rank.rank, order};
  prefetch(rank, key, at);
  last_arrivals(rank, key, at);
}

void PerfettoWriter::tracks(const model::Rank& rank, const Place& at) {
  for (size_t t = 0; t < rank.tracks.size(); ++t) {
    const model::Track& track = rank.tracks[t];
    event(fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":{}}}}})", at.pid, t,
                      json_string(track_name(track, t))));
    for (const model::Event& e : track.events) {
      const std::string head = fmt::format(R"("pid":{},"tid":{},"ts":{},"name":{},"cat":{})", at.pid, t, at.ts(e.ts_ns),
                                           json_string(rank.str(e.name)), json_string(rank.str(e.cat)));
      std::string args;
      if (e.coll != model::CollectiveKind::None)
        args = fmt::format(R"(,"args":{{"collective":{},"bytes":{},"seq":{}}})", json_string(model::to_string(e.coll)),
                           e.bytes, e.seq == model::kNoSeq ? int64_t(-1) : int64_t(e.seq));
      if (e.flags & model::kInstant) event(fmt::format(R"({{"ph":"i","s":"t",{}{}}})", head, args));
      else
        event(fmt::format(R"({{"ph":"X",{},"dur":{}{}}})", head, Place::us(e.dur_ns), args));
    }
  }
}

// The step windows, and inside each completed one the communication no compute covered: the intervals whose
// lengths add up to the report's exposed time (report.cc: measure() over the same windows).
void PerfettoWriter::steps_and_exposed(const model::Rank& rank, const Place& at) {
  const metrics::DeviceSets sets = metrics::device_sets(rank);
  for (const model::Step& s : rank.steps) {
    const metrics::IntervalSet exposed = subtract(metrics::clip(sets.comm, s.start_ns, s.end_ns), sets.compute);
    const int64_t exposed_ns = metrics::length(exposed);
    event(fmt::format(
        R"({{"ph":"X","pid":{},"tid":{},"ts":{},"dur":{},"name":{},"args":{{"aborted":{},"exposed_ns":{}}}}})", at.pid,
        kStepsTid, at.ts(s.start_ns), Place::us(s.end_ns - s.start_ns), json_string(fmt::format("step {}", s.number)),
        s.aborted, exposed_ns));
    if (s.aborted || sets.device_events == 0) continue;  // left out of the report's totals too
    for (const metrics::Interval& i : exposed)
      event(fmt::format(R"({{"ph":"X","pid":{},"tid":{},"ts":{},"dur":{},"name":"exposed","args":{{"step":{}}}}})",
                        at.pid, kExposedTid, at.ts(i.start), Place::us(i.end - i.start), s.number));
  }
}

// Each unit pair's verdict at its all-gather: hidden, or the cause that kept it from hiding (named peers as
// the run's table names them).
void PerfettoWriter::prefetch(const model::Rank& rank, metrics::RankKey key, const Place& at) {
  metrics::RankPrefetch p = metrics::check_prefetch(rank);
  metrics::locate_all_gathers(rank, p);
  table_.name_late_peers(p, key);
  for (const metrics::StepPrefetch& s : p.steps)
    for (const metrics::UnitPrefetch& u : s.units) {
      if (!u.all_gather.valid()) continue;
      const std::string verdict = u.cause == metrics::Cause::None ? "hidden" : cause_name(u.cause);
      event(fmt::format(R"({{"ph":"X","pid":{},"tid":{},"ts":{},"dur":{},"name":{},"args":{{"step":{},"unit":{},)"
                        R"("next_unit":{},"verdict":{},"hidden_share":{:.4f},"exposed_wait_ns":{},)"
                        R"("issue_lead_ns":{},"late_peer":{}}}}})",
                        at.pid, kPrefetchTid, at.ts(u.ag_start_ns), Place::us(u.ag_end_ns - u.ag_start_ns),
                        json_string(fmt::format("unit {}: {}", u.unit, verdict)), s.step, u.unit, u.next_unit,
                        json_string(verdict), u.hidden_share(), u.exposed_wait_ns, u.issue_lead_ns, u.late_peer));
    }
}

// At each collective every rank has and some rank reached late: a flow from the first rank that arrived
// (it waited longest) to the last one, bound to their kernels.
void PerfettoWriter::last_arrivals(const model::Rank& rank, metrics::RankKey key, const Place& at) {
  if (table_.rank_count() < 2) return;
  for (const metrics::CollectiveRef& r : metrics::instance_ids(rank)) {
    const auto it = table_.instances().find(r.id);
    if (it == table_.instances().end()) continue;
    const metrics::Instance& in = it->second;
    if (in.ranks != table_.rank_count() || in.last_ns <= in.first_ns) continue;
    const model::Event& e = rank.tracks[r.track].events[r.index];
    const bool last = in.last_lo == key;
    const bool first = at.clock.to_realtime(e.ts_ns) == in.first_ns;
    if (!last && !first) continue;
    const uint64_t id = flow_id_.emplace(r.id, flow_id_.size() + 1).first->second;
    if (!last && !flow_started_.insert(id).second) continue;  // a tie for first: the first rank written
    event(fmt::format(R"({{"ph":"{}",{}"id":{},"pid":{},"tid":{},"ts":{},"name":{},"cat":{}}})", last ? 'f' : 's',
                      last ? R"("bp":"e",)" : "", id, at.pid, r.track, at.ts(e.ts_ns),
                      json_string(fmt::format("{} waited for rank {}", model::to_string(r.id.kind), in.last_lo.rank)),
                      json_string(kLastArrivalCat)));
  }
}

void PerfettoWriter::finish() { out_ << "\n]}\n"; }

}  // namespace shardscope::report
