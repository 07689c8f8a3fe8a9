// The viewer's model without widgets: rows for the golden traces, level of detail (folded runs, counts,
// only visible events touched), hit testing, and range statistics on a hand-built rank.
#include <QtTest>

#include <random>

#include "analyzer/analysis/run.h"
#include "tests/viewer/viewer_test_support.h"
#include "viewer/model/event_args.h"
#include "viewer/model/range_stats.h"
#include "viewer/model/timeline_layout.h"

using namespace shardscope;
using namespace shardscope::viewer;

namespace {

using test::load;
model::Event ev(int64_t ts, int64_t dur, model::IntervalClass cls = model::IntervalClass::Compute,
                model::CollectiveKind coll = model::CollectiveKind::None) {
  return test::event(ts, dur, cls, coll);
}

TrackIndex flat_index(const model::Track& t) { return build_track_index(t, std::vector<uint16_t>(t.events.size(), 0)); }

// Rows must tile the height in order, without overlapping.
void check_rows_ordered(const TimelineLayout& l) {
  int y = 0;
  for (const Row& r : l.rows()) {
    QVERIFY(r.y >= y);
    QVERIFY(r.height > 0);
    y = r.y + r.height;
  }
  QVERIFY(l.height() >= y);
}

}  // namespace

class TestViewerModel : public QObject {
  Q_OBJECT
 private slots:
  void layoutKinetoTwoRanks() {
    analysis::AnalysedRun run = load("tests/golden/kineto_two_ranks");
    QCOMPARE(run.trace.ranks.size(), size_t(2));
    TimelineLayout l(run.trace);
    check_rows_ordered(l);
    std::vector<std::string> headers;
    size_t track_rows = 0, comm_rows = 0;
    for (const Row& r : l.rows()) {
      if (r.kind == RowKind::RankHeader) headers.push_back(r.label);
      if (r.kind != RowKind::Track) continue;
      ++track_rows;
      const RankView& rv = l.ranks()[r.rank];
      const model::Track& t = rv.rank->tracks[size_t(r.item)];
      QVERIFY(!t.events.empty());
      // One lane per nesting depth: the deepest event's depth + 1.
      uint16_t deepest =
          *std::max_element(rv.index.depth[size_t(r.item)].begin(), rv.index.depth[size_t(r.item)].end());
      QCOMPARE(int(r.lanes), deepest + 1);
      QCOMPARE(r.height, r.lanes * l.options().lane_height);
      for (const model::Event& e : t.events)
        if (e.cls == model::IntervalClass::Communication) {
          ++comm_rows;
          break;
        }
    }
    QCOMPARE(headers, (std::vector<std::string>{"rank 0", "rank 1"}));
    size_t nonempty = 0;
    for (const model::Rank& rank : run.trace.ranks)
      for (const model::Track& t : rank.tracks) nonempty += !t.events.empty();
    QCOMPARE(track_rows, nonempty);
    QVERIFY(comm_rows >= 2);  // each rank has a stream with NCCL kernels
    QCOMPARE(l.events(), run.trace.ranks[0].event_count() + run.trace.ranks[1].event_count());
    QVERIFY(l.start_ns() < l.end_ns());
    // Host threads come first in each group: they nest, so they have lanes to spare.
    const Row& first = l.rows()[1];
    QCOMPARE(l.ranks()[0].rank->tracks[size_t(first.item)].kind, model::TrackKind::HostThread);
    QVERIFY(first.lanes > 1);
  }

  void layoutGpuDemo() {
    analysis::AnalysedRun run = load("tests/golden/gpu_demo/gpu_demo.json.gz");
    TimelineLayout l(run.trace);
    check_rows_ordered(l);
    QCOMPARE(size_t(std::count_if(l.rows().begin(), l.rows().end(),
                                  [](const Row& r) { return r.kind == RowKind::RankHeader; })),
             run.trace.ranks.size());
    bool stream = false;
    for (const Row& r : l.rows())
      if (r.kind == RowKind::Track &&
          l.ranks()[r.rank].rank->tracks[size_t(r.item)].kind == model::TrackKind::DeviceStream)
        stream = true;
    QVERIFY(stream);
    // row_at maps each row's pixels back to it.
    for (size_t i = 0; i < l.rows().size(); ++i) {
      int lane = -1;
      QCOMPARE(l.row_at(l.rows()[i].y + l.rows()[i].height - 1, &lane), int(i));
    }
  }

  // The details panel's args: loaded as the viewer loads (with args), each kernel of the GPU demo lists its
  // grid and block as the trace gives them, and an NVTX range its payload; loaded without, none.
  void argRowsOfGpuDemo() {
    analysis::AnalysedRun run = load("tests/golden/gpu_demo/gpu_demo.json.gz", true);
    TimelineLayout l(run.trace);
    const RankView& rv = l.ranks()[0];
    QVERIFY(rv.args != nullptr);
    const model::Rank& r = *rv.rank;
    size_t kernels = 0, ranges = 0;
    for (uint32_t t = 0; t < r.tracks.size(); ++t)
      for (uint32_t i = 0; i < r.tracks[t].events.size(); ++i) {
        const model::Event& e = r.tracks[t].events[i];
        std::vector<ArgRow> rows = arg_rows(r, rv.args, t, i);
        auto value = [&rows](const std::string& k) -> std::string {
          for (const ArgRow& a : rows)
            if (a.key == k) return a.value;
          return "(absent)";
        };
        if (r.str(e.cat) == "kernel") {
          ++kernels;
          // Nested values are JSON text (the shardscope importer writes it compact).
          QCOMPARE(value("grid"), std::string("[16384,1,1]"));
          QCOMPARE(value("block"), std::string("[256,1,1]"));
          QCOMPARE(value("correlation").find_first_not_of("0123456789"), std::string::npos);
        }
        if (r.str(e.cat) == "nvtx") {
          ++ranges;
          QCOMPARE(value("domain"), std::string("gpu-demo"));
          QVERIFY(value("payload") != "(absent)");
        }
      }
    QCOMPARE(kernels, size_t(10));
    QCOMPARE(ranges, size_t(5));
    QVERIFY(l.bytes() > TimelineLayout(load("tests/golden/gpu_demo/gpu_demo.json.gz").trace).bytes());

    analysis::AnalysedRun plain = load("tests/golden/gpu_demo/gpu_demo.json.gz");
    TimelineLayout pl(plain.trace);
    QVERIFY(pl.ranks()[0].args == nullptr);
    QVERIFY(arg_rows(*pl.ranks()[0].rank, pl.ranks()[0].args, 0, 0).empty());
  }

  void argTextOfEachKind() {
    model::Rank r;
    r.tracks.resize(1);
    r.tracks[0].events.resize(1);
    model::ArgsBuilder b(r.strings);
    b.begin(0, 0);
    b.add("n", int64_t(-42));
    b.add("x", 0.1);
    b.add("on", false);
    b.add_string("name", "ncclDevKernel_AllGather_RING_LL");
    b.add_json("dims", "[[4096, 4096], [4096]]");
    model::EventArgs a = b.finalize(r);
    std::vector<ArgRow> rows = arg_rows(r, &a, 0, 0);
    QCOMPARE(rows.size(), size_t(5));
    QCOMPARE(rows[0].value, std::string("-42"));
    QCOMPARE(rows[1].value, std::string("0.1"));
    QCOMPARE(rows[2].value, std::string("false"));
    QCOMPARE(rows[3].key, std::string("name"));
    QCOMPARE(rows[4].value, std::string("[[4096, 4096], [4096]]"));
    // Cut long values, never inside a UTF-8 sequence.
    std::vector<ArgRow> cut = arg_rows(r, &a, 0, 0, 6);
    QCOMPARE(cut[3].value, std::string("ncclDe\u2026"));
    model::ArgValue s;
    s.kind = model::ArgKind::String;
    s.s = r.strings.intern("ab\u00e9c");  // é is two bytes: a cut after "ab" + one byte backs off to "ab"
    QCOMPARE(arg_text(r, s, 3), std::string("ab\u2026"));
  }

  void foldsSubPixelRuns() {
    model::Track t;
    // 1000 events of 10 ns every 20 ns, a gap, then one 50 µs event.
    for (int i = 0; i < 1000; ++i) t.events.push_back(ev(i * 20, 10));
    t.events.push_back(ev(100'000, 50'000, model::IntervalClass::Communication, model::CollectiveKind::AllGather));
    TrackIndex idx = flat_index(t);
    Viewport vp = Viewport::fit(0, 200'000, 200);  // 1000 ns per pixel
    std::vector<Mark> marks;
    // Unbounded runs: the whole dense run, 20 px wide, is one mark.
    track_marks(t, idx, vp, marks, {.max_run_px = 1e9});
    QCOMPARE(marks.size(), size_t(2));
    QCOMPARE(marks[0].count, 1000u);
    QCOMPARE(marks[0].colour, kCompute);
    QVERIFY(marks[0].x1 - marks[0].x0 > 19 && marks[0].x1 - marks[0].x0 < 21);
    QCOMPARE(marks[1].count, 1u);
    QCOMPARE(marks[1].event, 1000u);
    QCOMPARE(marks[1].colour, kAllGather);
    QCOMPARE(marks[1].x0, 100.0f);
    QCOMPARE(marks[1].x1, 150.0f);
    // Runs that reach about a pixel: one mark per pixel column of the dense run, 51 events each.
    marks.clear();
    track_marks(t, idx, vp, marks, {.max_run_px = 1});
    QCOMPARE(marks.size(), size_t(21));
    uint32_t folded = 0;
    for (size_t i = 0; i + 1 < marks.size(); ++i) {
      QVERIFY(marks[i].x1 - marks[i].x0 <= 1.05f);
      QVERIFY(i == 0 || marks[i].x0 >= marks[i - 1].x1);  // runs do not overlap
      folded += marks[i].count;
    }
    QCOMPARE(folded, 1000u);
    QCOMPARE(marks.back().event, 1000u);
    // The default reach, 8 px: three marks for the 20 px run.
    marks.clear();
    track_marks(t, idx, vp, marks);
    QCOMPARE(marks.size(), size_t(4));
    // Zoomed in to 1 ns per pixel, every event is its own mark.
    marks.clear();
    track_marks(t, idx, Viewport::fit(0, 1000, 1000), marks);
    QCOMPARE(marks.size(), size_t(50));
    for (const Mark& m : marks) QCOMPARE(m.count, 1u);
  }

  void gapsOfAPixelSplitRuns() {
    model::Track t;
    // Two dense runs 5 px apart stay two marks.
    for (int i = 0; i < 100; ++i) t.events.push_back(ev(i * 10, 5));
    for (int i = 0; i < 100; ++i) t.events.push_back(ev(6000 + i * 10, 5));
    TrackIndex idx = flat_index(t);
    std::vector<Mark> marks;
    track_marks(t, idx, Viewport::fit(0, 10'000, 10), marks);  // 1000 ns per pixel
    QCOMPARE(marks.size(), size_t(2));
    QCOMPARE(marks[0].count + marks[1].count, 200u);
    QCOMPARE(marks[1].event, 100u);
  }

  void countsSumToVisibleEvents() {
    model::Track t;
    // Irregular widths: some events wider than a pixel, most not.
    int64_t ts = 0;
    for (int i = 0; i < 20'000; ++i) {
      int64_t dur = (i % 97 == 0) ? 5000 : 3 + i % 40;
      t.events.push_back(ev(ts, dur, i % 3 ? model::IntervalClass::Compute : model::IntervalClass::Memory));
      ts += dur + (i % 7) * 11;
    }
    TrackIndex idx = flat_index(t);
    for (double frac : {1.0, 0.1, 0.01}) {
      for (double at : {0.0, 0.33, 0.9}) {
        double span = double(ts) * frac;
        Viewport vp;
        vp.width_px = 800;
        vp.ns_per_px = span / vp.width_px;
        vp.start_ns = double(ts) * at * (1 - frac) + 1234;
        std::vector<Mark> marks;
        track_marks(t, idx, vp, marks);
        size_t sum = 0;
        for (const Mark& m : marks) {
          sum += m.count;
          // Every mark's events lie in the view: the first starts before its right edge and reaches in.
          const model::Event& first = t.events[m.event];
          QVERIFY(double(first.ts_ns) < vp.end_ns());
          const model::Event& last = t.events[m.event + m.count - 1];
          QVERIFY(double(last.end_ns()) > vp.start_ns);
          QVERIFY(m.x0 >= -1 && m.x1 <= vp.width_px + 1 && m.x0 <= m.x1);
        }
        QCOMPARE(sum, visible_events(t, idx.lanes[0], vp.start_ns, vp.end_ns()));
        // A frame is bounded by pixels, not events: at most about two marks per pixel.
        QVERIFY(marks.size() <= size_t(2 * vp.width_px + 2));
      }
    }
  }

  // Where a run stops comes from the block-maximum hierarchy: it must name the same position as reading
  // every break in turn, for lanes across the block sizes (64, 4096) and for every threshold and start.
  void firstBreakAgreesWithAScan() {
    std::mt19937 rng(7);
    for (uint32_t n : {1u, 63u, 64u, 65u, 4095u, 4097u, 70'000u}) {
      model::Track t;
      int64_t ts = 0;
      for (uint32_t i = 0; i < n; ++i) {
        int64_t dur = rng() % 100 == 0 ? 5000 + rng() % 5000 : rng() % 50;
        int64_t gap = rng() % 500 == 0 ? 20'000 : rng() % 30;
        t.events.push_back(ev(ts, dur));
        ts += dur + gap;
      }
      TrackIndex idx = flat_index(t);
      const LaneIndex& lane = idx.lanes[0];
      for (float threshold : {1.0f, 60.0f, 4000.0f, 15'000.0f, 1e9f}) {
        for (int trial = 0; trial < 200; ++trial) {
          uint32_t from = rng() % n, to = from + rng() % (n - from + 1);
          uint32_t expect = from;
          while (expect < to && lane.breaks[0][expect] < threshold) ++expect;
          QCOMPARE(first_break(lane, from, to, threshold), from >= to ? to : expect);
        }
      }
    }
  }

  void nestedLanesAndHitTest() {
    model::Rank rank;
    model::Track t;
    t.kind = model::TrackKind::HostThread;
    t.events = {ev(0, 1000, model::IntervalClass::Host), ev(100, 300, model::IntervalClass::Host),
                ev(150, 50, model::IntervalClass::Host), ev(600, 200, model::IntervalClass::Host)};
    rank.tracks.push_back(t);
    model::Trace trace;
    trace.ranks.push_back(std::move(rank));
    TimelineLayout l(trace);
    const RankView& rv = l.ranks()[0];
    QCOMPARE(rv.tracks[0].lanes.size(), size_t(3));
    QCOMPARE(l.rows()[1].lanes, uint16_t(3));
    const model::Track& tr = rv.rank->tracks[0];
    QCOMPARE(rv.tracks[0].lanes[1].size(), 2u);  // the two children of the root
    QCOMPARE(hit_test(tr, rv.tracks[0].lanes[1], 700, 0).value(), 3u);
    QCOMPARE(hit_test(tr, rv.tracks[0].lanes[2], 160, 0).value(), 2u);
    QVERIFY(!hit_test(tr, rv.tracks[0].lanes[2], 900, 10));
    QCOMPARE(hit_test(tr, rv.tracks[0].lanes[0], 999, 0).value(), 0u);
  }

  void rangeStatsOnHandBuiltRank() {
    model::Rank rank;
    model::Track compute, comm;
    compute.kind = model::TrackKind::DeviceStream;
    comm.kind = model::TrackKind::Communication;
    compute.events = {ev(0, 100), ev(300, 100)};
    comm.events = {ev(50, 100, model::IntervalClass::Communication, model::CollectiveKind::AllGather),
                   ev(500, 100, model::IntervalClass::Communication, model::CollectiveKind::ReduceScatter)};
    rank.tracks = {compute, comm};
    RangeIndex idx = build_range_index(rank);
    RangeStats s = range_stats(idx, 0, 1000);
    QCOMPARE(s.class_ns[size_t(model::IntervalClass::Compute)], int64_t(200));
    QCOMPARE(s.class_ns[size_t(model::IntervalClass::Communication)], int64_t(200));
    QCOMPARE(s.window.overlap_ns, int64_t(50));
    QCOMPARE(s.window.exposed_ns(), int64_t(150));
    QCOMPARE(*s.window.overlap_pct(), 25.0);
    QCOMPARE(s.window.idle_ns(), int64_t(1000 - 350));
    // Clipped to a window that cuts the first pair: [80, 120) holds 20 ns of compute, 40 of comm, 20 shared.
    RangeStats c = range_stats(idx, 80, 120);
    QCOMPARE(c.window.compute_ns, int64_t(20));
    QCOMPARE(c.window.comm_ns, int64_t(40));
    QCOMPARE(c.window.overlap_ns, int64_t(20));
    QCOMPARE(*c.window.overlap_pct(), 50.0);
    // Nothing there: no overlap percentage, not a zero.
    QVERIFY(!range_stats(idx, 700, 800).window.overlap_pct());
  }
};

QTEST_GUILESS_MAIN(TestViewerModel)
#include "tst_viewer_model.moc"
