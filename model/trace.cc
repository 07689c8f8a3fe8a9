#include "model/trace.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

namespace shardscope::model {

std::string_view to_string(IntervalClass c) {
  switch (c) {
    case IntervalClass::Host: return "host";
    case IntervalClass::Compute: return "compute";
    case IntervalClass::Communication: return "communication";
    case IntervalClass::Memory: return "memory";
    case IntervalClass::Sync: return "sync";
    case IntervalClass::Other: return "other";
  }
  return "?";
}

std::string_view to_string(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::None: return "none";
    case CollectiveKind::AllGather: return "all_gather";
    case CollectiveKind::ReduceScatter: return "reduce_scatter";
    case CollectiveKind::AllReduce: return "all_reduce";
    case CollectiveKind::Broadcast: return "broadcast";
    case CollectiveKind::SendRecv: return "send_recv";
    case CollectiveKind::AllToAll: return "all_to_all";
    case CollectiveKind::AllToAllDispatch: return "all_to_all_dispatch";
    case CollectiveKind::AllToAllCombine: return "all_to_all_combine";
    case CollectiveKind::Reduce: return "reduce";
    case CollectiveKind::Barrier: return "barrier";
    case CollectiveKind::Unknown: return "unknown";
  }
  return "?";
}

double CounterSeries::peak() const {
  double p = 0;
  for (const CounterSample& s : samples) p = std::max(p, s.value);
  return p;
}

void Rank::set_run_config(nlohmann::json cfg) {
  run_config = std::move(cfg);
  shape = trace::run_shape_from_json(run_config);
}

size_t Rank::event_count() const {
  size_t n = 0;
  for (const Track& t : tracks) n += t.events.size();
  return n;
}

const CounterSeries* Rank::counter(std::string_view name) const {
  for (const CounterSeries& c : counters)
    if (c.name == name) return &c;
  return nullptr;
}

void permute_events(std::vector<Event>& events, std::vector<uint32_t>& order) {
  for (uint32_t i = 0; i < order.size(); ++i) {
    if (order[i] == i) continue;
    const Event held = events[i];
    uint32_t j = i;
    while (order[j] != i) {
      const uint32_t from = order[j];
      events[j] = events[from];
      order[j] = j;
      j = from;
    }
    events[j] = held;
    order[j] = j;
  }
}

// Traces list a thread's events nearly in order (a step's range after the ops inside it, say): one pass
// keeps the events in order and sets aside the few others (the lone early or late one), which are sorted
// and merged in. Ties go by position, so the result is std::stable_sort's, in linear time on such input.
// The order is worked out on 4-byte positions and the events then moved in place: a sorted copy of the
// events (or stable_sort's buffer of half of them) was most of a big file's peak when its tracks came out
// of order.
void sort_events(std::vector<Event>& events) {
  const size_t n = events.size();
  if (std::is_sorted(events.begin(), events.end(), event_before)) return;
  if (n > UINT32_MAX) return std::stable_sort(events.begin(), events.end(), event_before);
  auto before = [&](uint32_t a, uint32_t b) {
    return event_before(events[a], events[b]) || (!event_before(events[b], events[a]) && a < b);
  };
  std::vector<uint32_t> order;
  {
    std::vector<uint32_t> run, rest;
    run.reserve(n);
    for (uint32_t i = 0; i < n; ++i) {
      if (run.empty() || !event_before(events[i], events[run.back()])) {
        run.push_back(i);
      } else if (run.size() >= 2 && !event_before(events[i], events[run[run.size() - 2]])) {
        rest.push_back(run.back());  // the run's last came too early
        run.back() = i;
      } else {
        rest.push_back(i);  // this one comes too late
      }
    }
    if (rest.size() > n / 8) {
      std::vector<uint32_t>().swap(run);
      order.resize(n);
      std::iota(order.begin(), order.end(), 0u);
      std::stable_sort(order.begin(), order.end(),
                       [&](uint32_t a, uint32_t b) { return event_before(events[a], events[b]); });
    } else {
      std::sort(rest.begin(), rest.end(), before);
      order.reserve(n);
      size_t i = 0, j = 0;
      while (i < run.size() || j < rest.size())
        order.push_back(j == rest.size() || (i < run.size() && before(run[i], rest[j])) ? run[i++] : rest[j++]);
    }
  }
  permute_events(events, order);
}

void sort_counters(Rank& rank) {
  for (CounterSeries& c : rank.counters)
    std::stable_sort(c.samples.begin(), c.samples.end(),
                     [](const CounterSample& a, const CounterSample& b) { return a.ts_ns < b.ts_ns; });
  std::sort(rank.counters.begin(), rank.counters.end(),
            [](const CounterSeries& a, const CounterSeries& b) { return a.name < b.name; });
}

void Rank::finalize() {
  for (Track& t : tracks) sort_events(t.events);
  sort_counters(*this);
  std::stable_sort(allocator.begin(), allocator.end(),
                   [](const AllocatorEvent& a, const AllocatorEvent& b) { return a.ts_ns < b.ts_ns; });
}

}  // namespace shardscope::model
