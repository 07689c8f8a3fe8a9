// model::sort_events sorts nearly ordered tracks in one pass plus a merge: its order must be exactly
// std::stable_sort's, ties (same start, same length) kept in their first order, on any input.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "model/trace.h"

namespace shardscope::model {
namespace {

// Events in order but for `moved` percent taken out and put back anywhere; few distinct times and
// lengths, so ties are common. `name` records the position before sorting.
std::vector<Event> events(size_t n, int moved_percent, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Event> out(n);
  for (size_t i = 0; i < n; ++i)
    out[i].ts_ns = int64_t(i / 3) * 10, out[i].dur_ns = i % 3 == 0;  // in order: longer first
  for (size_t k = 0; k < n * size_t(moved_percent) / 100; ++k) {
    Event e = out[rng() % n];
    out.erase(out.begin() + int64_t(rng() % n));
    out.insert(out.begin() + int64_t(rng() % n), e);
  }
  for (size_t i = 0; i < n; ++i) out[i].name = StringId(i);
  return out;
}

std::vector<StringId> order(const std::vector<Event>& ev) {
  std::vector<StringId> out;
  for (const Event& e : ev) out.push_back(e.name);
  return out;
}

TEST(SortEvents, SameOrderAsStableSort) {
  // Sorted, nearly sorted (the merge), and scrambled (the fallback to stable_sort).
  for (int percent : {0, 1, 3, 5, 50})
    for (uint32_t seed = 1; seed <= 20; ++seed) {
      std::vector<Event> ev = events(2000, percent, seed), want = ev;
      std::stable_sort(want.begin(), want.end(), event_before);
      sort_events(ev);
      ASSERT_EQ(order(ev), order(want)) << percent << "% moved, seed " << seed;
    }
}

TEST(SortEvents, AStepAfterItsOpsGoesBeforeThem) {
  std::vector<Event> ev(4);
  ev[0].ts_ns = 10, ev[1].ts_ns = 20, ev[2].ts_ns = 30, ev[3].ts_ns = 10, ev[3].dur_ns = 100;
  for (uint32_t i = 0; i < 4; ++i) ev[i].name = i;
  sort_events(ev);
  EXPECT_EQ(order(ev), (std::vector<StringId>{3, 0, 1, 2}));
}

}  // namespace
}  // namespace shardscope::model
