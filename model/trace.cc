#include "model/trace.h"

#include <algorithm>

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

void sort_events(std::vector<Event>& events) { std::stable_sort(events.begin(), events.end(), event_before); }

void sort_counters(Rank& rank) {
  for (CounterSeries& c : rank.counters)
    std::stable_sort(c.samples.begin(), c.samples.end(), [](const CounterSample& a, const CounterSample& b) { return a.ts_ns < b.ts_ns; });
  std::sort(rank.counters.begin(), rank.counters.end(), [](const CounterSeries& a, const CounterSeries& b) { return a.name < b.name; });
}

void Rank::finalize() {
  for (Track& t : tracks) sort_events(t.events);
  sort_counters(*this);
}

}  // namespace shardscope::model
