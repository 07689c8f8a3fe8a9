// The args side table on its own: values of every kind read back as given, args follow their events through
// the sort Rank::finalize does, and the layout stays compact.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "model/args.h"
#include "model/trace.h"

using namespace shardscope;
using model::ArgKind;

namespace {

model::Event at(int64_t ts, int64_t dur) {
  model::Event e;
  e.ts_ns = ts;
  e.dur_ns = dur;
  return e;
}

TEST(ArgsTable, ValuesOfEveryKindReadBack) {
  model::Rank r;
  r.tracks.resize(1);
  r.tracks[0].events = {at(10, 5)};
  model::ArgsBuilder b(r.strings);
  b.begin(0, 0);
  b.add("grid", int64_t(-7));
  b.add("min", std::numeric_limits<int64_t>::min());
  b.add("max", std::numeric_limits<int64_t>::max());
  b.add("ratio", 0.996);
  b.add("inf", std::numeric_limits<double>::infinity());
  b.add("on", true);
  b.add_string("dtype", "Float");
  b.add_json("block", "[128, 1, 1]");
  model::EventArgs a = b.finalize(r);
  std::vector<model::Arg> got = a.of(0, 0);
  ASSERT_EQ(got.size(), 8u);
  auto key = [&](size_t k) { return std::string(r.str(got[k].key)); };
  EXPECT_EQ(key(0), "grid");
  EXPECT_EQ(got[0].value.kind, ArgKind::Int);
  EXPECT_EQ(got[0].value.i, -7);
  EXPECT_EQ(got[1].value.i, std::numeric_limits<int64_t>::min());
  EXPECT_EQ(got[2].value.i, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(got[3].value.kind, ArgKind::Double);
  EXPECT_EQ(got[3].value.d, 0.996);
  EXPECT_TRUE(std::isinf(got[4].value.d));
  EXPECT_EQ(got[5].value.kind, ArgKind::Bool);
  EXPECT_EQ(got[5].value.i, 1);
  EXPECT_EQ(key(6), "dtype");
  EXPECT_EQ(got[6].value.kind, ArgKind::String);
  EXPECT_EQ(r.str(got[6].value.s), "Float");
  EXPECT_EQ(got[7].value.kind, ArgKind::Json);
  EXPECT_EQ(r.str(got[7].value.s), "[128, 1, 1]");
  EXPECT_EQ(a.find(0, 0, r.strings.find("dtype"))->s, got[6].value.s);
  EXPECT_FALSE(a.find(0, 0, r.strings.find("nope")));
  // Out of range: nothing, not a crash.
  EXPECT_TRUE(a.of(0, 1).empty());
  EXPECT_TRUE(a.of(3, 0).empty());
}

// Events given out of order on several tracks, each with its own number as an arg (and some with none):
// after finalize every event's arg still names it, on tracks with and without args.
TEST(ArgsTable, ArgsFollowTheirEventsThroughTheSort) {
  std::mt19937 rng(13);
  model::Rank r;
  r.tracks.resize(3);
  model::ArgsBuilder b(r.strings);
  for (uint32_t t = 0; t < 2; ++t)
    for (int64_t n = 0; n < 2000; ++n) {
      model::Event e = at(int64_t(rng() % 500), int64_t(rng() % 50));
      e.unit = int32_t(n);  // the event's own number, to check against
      r.tracks[t].events.push_back(e);
      if (n % 3 == 0) continue;  // no args
      b.begin(t, uint32_t(n));
      b.add("n", n);
      // More keys than fit one byte with the kind: key numbers past 15 take two.
      b.add_string("k" + std::to_string(n % 40), "v" + std::to_string(n));
    }
  for (int64_t n = 0; n < 100; ++n) r.tracks[2].events.push_back(at(100 - n, 1));
  model::EventArgs a = b.finalize(r);
  model::StringId key_n = r.strings.find("n");
  size_t with = 0;
  for (uint32_t t = 0; t < 3; ++t) {
    const auto& ev = r.tracks[t].events;
    for (uint32_t i = 0; i < ev.size(); ++i) {
      if (i) {
        EXPECT_FALSE(model::event_before(ev[i], ev[i - 1]));
      }
      std::vector<model::Arg> got = a.of(t, i);
      if (ev[i].unit % 3 == 0 || t == 2) {
        EXPECT_TRUE(got.empty());
        continue;
      }
      ++with;
      ASSERT_EQ(got.size(), 2u);
      EXPECT_EQ(got[0].key, key_n);
      EXPECT_EQ(got[0].value.i, ev[i].unit);
      EXPECT_EQ(r.str(got[1].key), "k" + std::to_string(ev[i].unit % 40));
      EXPECT_EQ(r.str(got[1].value.s), "v" + std::to_string(ev[i].unit));
    }
  }
  EXPECT_EQ(a.events_with_args(), with);
  // Ranges (8 B an event on the two tracks with args) and the encoded args: about 2 + 3 + 2 + 2 bytes.
  EXPECT_LT(a.memory_bytes(), 4000 * 8 + with * 12 + 4096);
}

TEST(ArgsTable, RelocateMovesArgsNumberedInOneArray) {
  model::Rank r;
  r.tracks.resize(2);
  model::ArgsBuilder b(r.strings);
  // Three events numbered 0..2 in one array, dealt out as: 0 -> (1, 0), 1 -> (0, 0), 2 -> (1, 1).
  for (uint32_t i = 0; i < 3; ++i) {
    b.begin(0, i);
    b.add("i", int64_t(i));
  }
  r.tracks[0].events = {at(5, 1)};
  r.tracks[1].events = {at(20, 1), at(10, 1)};  // finalize swaps these
  b.relocate({{1, 0}, {0, 0}, {1, 1}});
  model::EventArgs a = b.finalize(r);
  EXPECT_EQ(a.of(0, 0).at(0).value.i, 1);
  EXPECT_EQ(r.tracks[1].events[0].ts_ns, 10);
  EXPECT_EQ(a.of(1, 0).at(0).value.i, 2);
  EXPECT_EQ(a.of(1, 1).at(0).value.i, 0);
}

// An importer may give one event's args in pieces, between other events' (begin() again for it later): they
// read back whole, in the order given, through the sort, beside events given in one piece.
TEST(ArgsTable, OneEventsArgsGivenInPiecesReadBackWhole) {
  model::Rank r;
  r.tracks.resize(2);
  r.tracks[0].events = {at(30, 1), at(10, 1), at(20, 1)};  // finalize puts them in order: 1, 2, 0
  r.tracks[1].events = {at(5, 1)};
  model::ArgsBuilder b(r.strings);
  b.begin(0, 0);
  b.add("a", int64_t(1));
  b.begin(0, 1);
  b.add("b", int64_t(2));
  b.begin(1, 0);
  b.add_string("c", "x");
  b.begin(0, 0);  // event 0 again, after two others
  b.add("d", int64_t(3));
  b.add("e", 0.5);
  b.begin(0, 2);
  b.begin(0, 0);  // and once more
  b.add("f", true);
  model::EventArgs a = b.finalize(r);
  ASSERT_EQ(r.tracks[0].events[2].ts_ns, 30);  // event 0
  const std::vector<model::Arg> zero = a.of(0, 2);
  ASSERT_EQ(zero.size(), 4u);
  EXPECT_EQ(r.str(zero[0].key), "a");
  EXPECT_EQ(zero[0].value.i, 1);
  EXPECT_EQ(r.str(zero[1].key), "d");
  EXPECT_EQ(zero[1].value.i, 3);
  EXPECT_EQ(r.str(zero[2].key), "e");
  EXPECT_EQ(zero[2].value.d, 0.5);
  EXPECT_EQ(r.str(zero[3].key), "f");
  EXPECT_EQ(zero[3].value.i, 1);
  ASSERT_EQ(a.of(0, 0).size(), 1u);  // event 1
  EXPECT_EQ(a.of(0, 0)[0].value.i, 2);
  EXPECT_TRUE(a.of(0, 1).empty());  // event 2: begun, nothing added
  ASSERT_EQ(a.of(1, 0).size(), 1u);
  EXPECT_EQ(r.str(a.of(1, 0)[0].value.s), "x");
  EXPECT_EQ(a.events_with_args(), 3u);
}

TEST(ArgsTable, NoArgsIsAnEmptyTableAndAPlainFinalize) {
  model::Rank r;
  r.tracks.resize(1);
  r.tracks[0].events = {at(3, 1), at(1, 1), at(2, 1)};
  model::ArgsBuilder b(r.strings);
  b.begin(0, 1);  // begun, nothing added
  model::EventArgs a = b.finalize(r);
  EXPECT_TRUE(a.empty());
  EXPECT_EQ(r.tracks[0].events[0].ts_ns, 1);
  EXPECT_EQ(r.tracks[0].events[2].ts_ns, 3);
  EXPECT_TRUE(a.of(0, 0).empty());
}

}  // namespace
