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

// permute_events moves each event to its place in place: the result is the gather ev[order[j]] done on a copy,
// for any permutation (cycles of every length, fixed points, the identity), and `order` ends as the identity.
TEST(SortEvents, PermuteInPlaceIsTheGatherOfACopy) {
  std::mt19937 rng(7);
  for (size_t n : {size_t(0), size_t(1), size_t(2), size_t(17), size_t(1000)})
    for (int round = 0; round < 5; ++round) {
      std::vector<Event> ev(n);
      for (size_t i = 0; i < n; ++i) ev[i].name = StringId(i), ev[i].ts_ns = int64_t(rng() % 100);
      std::vector<uint32_t> perm(n);
      for (uint32_t i = 0; i < n; ++i) perm[i] = i;
      if (round) std::shuffle(perm.begin(), perm.end(), rng);  // round 0: the identity
      std::vector<StringId> want;
      for (uint32_t o : perm) want.push_back(ev[o].name);
      permute_events(ev, perm);
      ASSERT_EQ(perm.size(), n);
      EXPECT_EQ(ev.size(), n);
      EXPECT_EQ(order(ev), want) << n << " events, round " << round;
      for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(perm[i], i);
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
