// The models behind the overview strip, the search bar and the memory dock, without widgets: busy shares
// per bin on a hand-built rank, the strip's pixel/time mapping, search against a brute-force scan, hit
// stepping, the memory chart against the report's own rows, counter rows' axis, unit and value, the
// viewport held to the trace's ends, and the host colours by category.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cctype>

#include "analyzer/analysis/run.h"
#include "tests/viewer/viewer_test_support.h"
#include "viewer/model/counter_track.h"
#include "viewer/model/memory_chart.h"
#include "viewer/model/overview.h"
#include "viewer/model/palette.h"
#include "viewer/model/search.h"
#include "viewer/model/viewport.h"

using namespace shardscope;
using namespace shardscope::viewer;

namespace {

using test::load;

model::Event ev(int64_t ts, int64_t dur, model::StringId name = 0,
                model::IntervalClass cls = model::IntervalClass::Compute) {
  return test::event(ts, dur, cls, model::CollectiveKind::None, name);
}

model::Track track(model::TrackKind kind, std::vector<model::Event> events) {
  model::Track t;
  t.kind = kind;
  t.events = std::move(events);
  return t;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

class TestViewerViews : public QObject {
  Q_OBJECT
 private slots:
  void overviewBusyShares() {
    model::Trace trace;
    model::Rank& r = trace.ranks.emplace_back();
    r.tracks.push_back(track(model::TrackKind::DeviceStream, {ev(0, 100), ev(300, 100)}));
    r.tracks.push_back(track(model::TrackKind::Communication, {ev(0, 400)}));
    // A host range with one nested inside: only the outer lane counts, or bin 1 would be over-full.
    r.tracks.push_back(track(model::TrackKind::HostThread,
                             {ev(0, 400, 0, model::IntervalClass::Host), ev(100, 50, 0, model::IntervalClass::Host)}));
    r.tracks.push_back(track(model::TrackKind::DeviceStream, {}));  // empty: not a track that could be busy
    TimelineLayout layout(trace);
    Overview o = build_overview(layout, 4);
    QCOMPARE(o.start_ns, int64_t(0));
    QCOMPARE(o.end_ns, int64_t(400));
    QCOMPARE(o.density.size(), size_t(1));
    const std::vector<float>& d = o.density[0];
    QCOMPARE(d.size(), size_t(4));
    QCOMPARE(d[0], 1.0f);
    QVERIFY(std::abs(d[1] - 2.0f / 3) < 1e-6);
    QVERIFY(std::abs(d[2] - 2.0f / 3) < 1e-6);
    QCOMPARE(d[3], 1.0f);
    // Bins finer than events: a partial share at the edges. Bin width 40: [0, 100) fills 2.5 bins.
    Overview fine = build_overview(layout, 10);
    QVERIFY(std::abs(fine.density[0][2] - (0.5f + 1 + 1) / 3) < 1e-6);
  }

  void overviewMapsPixelsAndTime() {
    Overview o;
    o.start_ns = 1000;
    o.end_ns = 1400;
    Viewport all = Viewport::fit(1000, 1400, 100);
    auto [a, b] = overview_window(o, all, 200);
    QCOMPARE(a, 0.0);
    QCOMPARE(b, 200.0);
    Viewport part;
    part.start_ns = 1100;
    part.ns_per_px = 1;
    part.width_px = 100;
    auto [c, d] = overview_window(o, part, 200);
    QCOMPARE(c, 50.0);
    QCOMPARE(d, 100.0);
    // A click at strip pixel 100 (the run's middle, 1200) centres a 100 ns view there.
    QCOMPARE(overview_start_at(o, part, 100, 200), 1150.0);
    // Clicks beyond the strip clamp to its ends.
    QCOMPARE(overview_start_at(o, part, -30, 200), 950.0);
    QCOMPARE(overview_start_at(o, part, 900, 200), 1350.0);
  }

  // A hostile trace's times at both int64 ends: the span, the bins and the viewport are worked out without
  // int64 overflow (hi − lo, start + 1), and a time read off the screen converts back within the int64 range.
  void overviewAndViewportAcrossTheWholeInt64Range() {
    model::Trace trace;
    model::Rank& r = trace.ranks.emplace_back();
    // [INT64_MIN, -1) and [INT64_MAX - 10, INT64_MAX): the first half of the range busy.
    r.tracks.push_back(track(model::TrackKind::DeviceStream, {ev(INT64_MIN, INT64_MAX), ev(INT64_MAX - 10, 10)}));
    TimelineLayout layout(trace);
    Overview o = build_overview(layout, 4);
    QCOMPARE(o.start_ns, INT64_MIN);
    QCOMPARE(o.end_ns, INT64_MAX);
    QCOMPARE(o.density[0][0], 1.0f);
    QCOMPARE(o.density[0][1], 1.0f);
    QVERIFY(o.density[0][2] < 1e-6f);
    Viewport all = Viewport::fit(INT64_MIN, INT64_MAX, 100);
    QCOMPARE(all.ns_per_px, 0x1p64 / 100);
    auto [a, b] = overview_window(o, all, 200);
    QCOMPARE(a, 0.0);
    QCOMPARE(b, 200.0);
    QCOMPARE(Viewport::to_ns(all.ns_at(1e6)), INT64_MAX);
    QCOMPARE(Viewport::to_ns(all.ns_at(-1e6)), INT64_MIN);
    QCOMPARE(Viewport::to_ns(0x1p63), INT64_MAX);  // double(INT64_MAX) is 2^63: one past it
    QCOMPARE(Viewport::to_ns(-0x1p63), INT64_MIN);
    QCOMPARE(Viewport::to_ns(12.9), int64_t(12));
    // A run whose only time is INT64_MAX: no span, no division by zero.
    model::Trace last;
    last.ranks.emplace_back().tracks.push_back(track(model::TrackKind::DeviceStream, {ev(INT64_MAX, 0)}));
    TimelineLayout at_end(last);
    Overview e = build_overview(at_end, 4);
    QCOMPARE(e.end_ns, INT64_MAX);
    QVERIFY(std::all_of(e.density[0].begin(), e.density[0].end(), [](float v) { return v >= 0 && v <= 1; }));
  }

  void overviewOfGoldenRun() {
    analysis::AnalysedRun run = load("tests/golden/kineto_two_ranks");
    TimelineLayout layout(run.trace);
    Overview o = build_overview(layout, 512);
    QCOMPARE(o.density.size(), run.trace.ranks.size());
    for (const std::vector<float>& d : o.density) {
      QCOMPARE(d.size(), size_t(512));
      QVERIFY(std::all_of(d.begin(), d.end(), [](float v) { return v >= 0 && v <= 1; }));
      QVERIFY(std::count_if(d.begin(), d.end(), [](float v) { return v > 0; }) > 100);
    }
  }

  void searchMatchesByNameIgnoringCase() {
    model::Trace trace;
    for (int k = 0; k < 2; ++k) {
      model::Rank& r = trace.ranks.emplace_back();
      r.rank = k;
      model::StringId mm = r.strings.intern("aten::mm"), ag = r.strings.intern("ncclDevKernel_AllGather_RING"),
                      gemm = r.strings.intern("sm90_gemm");
      r.strings.intern("AllGather never used");  // a matching name no event has
      r.tracks.push_back(track(model::TrackKind::HostThread, {ev(0, 100, mm, model::IntervalClass::Host),
                                                              ev(200 + k, 10, mm, model::IntervalClass::Host)}));
      r.tracks.push_back(track(model::TrackKind::DeviceStream, {ev(20, 30, gemm), ev(210 + k, 5, gemm)}));
      r.tracks.push_back(track(model::TrackKind::Communication, {ev(50 - 40 * k, 500, ag), ev(600, 10, ag)}));
    }
    TimelineLayout layout(trace);
    SearchResult res = search_names(layout, "allGATHER");
    QCOMPARE(res.hits.size(), size_t(4));
    // By start time across ranks: rank 1's at 10, rank 0's at 50, then both at 600 (rank order).
    QCOMPARE(res.hits[0].ts_ns, int64_t(10));
    QCOMPARE(res.hits[0].rank, 1u);
    QCOMPARE(res.hits[1].ts_ns, int64_t(50));
    QCOMPARE(res.hits[2].rank, 0u);
    QCOMPARE(res.hits[3].rank, 1u);
    QCOMPARE(res.max_dur_ns, int64_t(500));
    for (const SearchHit& h : res.hits) QCOMPARE(h.event.track, 2u);
    QCOMPARE(search_names(layout, "MM").hits.size(), size_t(8));  // aten::mm and sm90_gemm
    QVERIFY(search_names(layout, "").hits.empty());
    QVERIFY(search_names(layout, "no such kernel").hits.empty());

    // Hits near a window: [300, 400) is inside the long all-gathers that began at 10 and 50.
    auto [first, last] = hits_near(res, 300, 400);
    QCOMPARE(first, size_t(0));
    QCOMPARE(last, size_t(2));
    // The gemms: at 20 (30 long, so over by 50) on both ranks, at 210 and 211. [205, 209) has none near;
    // [205, 212) the later two.
    SearchResult gemm = search_names(layout, "gemm");
    QCOMPARE(hits_near(gemm, 205, 209), std::make_pair(size_t(2), size_t(2)));
    QCOMPARE(hits_near(gemm, 205, 212), std::make_pair(size_t(2), size_t(4)));
  }

  void stepWrapsAround() {
    SearchResult r;
    r.hits.resize(3);
    QCOMPARE(step_hit(r, std::nullopt, true), size_t(0));
    QCOMPARE(step_hit(r, std::nullopt, false), size_t(2));
    QCOMPARE(step_hit(r, size_t(2), true), size_t(0));
    QCOMPARE(step_hit(r, size_t(0), false), size_t(2));
    QCOMPARE(step_hit(r, size_t(1), true), size_t(2));
  }

  void searchAgreesWithAScanOnGoldenRun() {
    analysis::AnalysedRun run = load("tests/golden/gpu_demo/gpu_demo.json.gz");
    TimelineLayout layout(run.trace);
    for (const char* text : {"gemm", "Memcpy", "nccl", "cudaLaunchKernel"}) {
      size_t expected = 0;
      for (const model::Rank& r : run.trace.ranks)
        for (const model::Track& t : r.tracks)
          for (const model::Event& e : t.events)
            expected += lower(r.str(e.name)).find(lower(text)) != std::string::npos;
      SearchResult res = search_names(layout, text);
      QCOMPARE(res.hits.size(), expected);
      QVERIFY(std::is_sorted(res.hits.begin(), res.hits.end(),
                             [](const SearchHit& a, const SearchHit& b) { return a.ts_ns < b.ts_ns; }));
    }
  }

  void memoryChartIsTheReportsComparison() {
    analysis::AnalysedRun run = load("tests/golden/trainer_cpu_2ranks/pre");
    MemoryChart c = memory_chart(run.report);
    QCOMPARE(c.ranks.size(), run.report.ranks.size());
    double both = 0, measured_only = 0;
    for (size_t r = 0; r < c.ranks.size(); ++r) {
      const metrics::RankMemory& m = run.report.ranks[r].memory;
      QCOMPARE(c.ranks[r].rank, run.report.ranks[r].rank);
      QCOMPARE(c.ranks[r].memory, &m);
      size_t with_value = 0;
      for (const metrics::MemoryRow& row : m.rows) {
        if (!row.measured && !row.predicted) continue;
        const MemoryBar& bar = c.ranks[r].bars[with_value++];
        QCOMPARE(bar.category, row.category);
        QCOMPARE(bar.measured, row.measured);
        QCOMPARE(bar.predicted, row.predicted);
        if (row.measured && row.predicted) {
          both = std::max({both, *row.measured, *row.predicted});
          QVERIFY(std::abs(*bar.departure - (*row.measured / *row.predicted - 1)) < 1e-12);
        } else {
          QVERIFY(!bar.departure);
          if (row.measured) measured_only = std::max(measured_only, *row.measured);
        }
      }
      QCOMPARE(c.ranks[r].bars.size(), with_value);
      QVERIFY(with_value >= 5);  // this run has the trainer's memory counters and its run_config
    }
    // The scale is the compared rows', not the allocator's total (measured only, and larger).
    QCOMPARE(c.scale_bytes, both);
    QVERIFY(measured_only > both);
  }

  void memoryChartWithoutCounters() {
    analysis::AnalysedRun run = load("tests/golden/kineto_two_ranks");
    MemoryChart c = memory_chart(run.report);
    QCOMPARE(c.ranks.size(), size_t(2));
    for (const MemoryRankChart& r : c.ranks) {
      QVERIFY(r.bars.empty());
      QVERIFY(r.memory->no_counters);
    }
  }

  void counterValueAxisAndUnit() {
    model::CounterSeries s;
    s.name = "gpu0.memory_allocated";
    s.samples = {{100, 1024}, {200, 3 * 1024 * 1024}, {300, 512}};
    QCOMPARE(counter_unit(s.name), CounterUnit::Bytes);
    QCOMPARE(counter_unit("queue depth"), CounterUnit::Count);
    // A counter holds its value until the next sample; nothing before the first.
    QVERIFY(!counter_value_at(s, 99));
    QCOMPARE(*counter_value_at(s, 100), 1024.0);
    QCOMPARE(*counter_value_at(s, 199.5), 1024.0);
    QCOMPARE(*counter_value_at(s, 250), 3.0 * 1024 * 1024);
    QCOMPARE(*counter_value_at(s, 1e12), 512.0);
    CounterAxis a = counter_axis(s);
    QCOMPARE(a.min, 0.0);
    QCOMPARE(a.max, 3.0 * 1024 * 1024);
    s.samples.push_back({400, -5});
    QCOMPARE(counter_axis(s).min, -5.0);
    model::CounterSeries zeros;
    zeros.samples = {{1, 0}, {2, 0}};
    QVERIFY(counter_axis(zeros).max > counter_axis(zeros).min);  // an axis even when flat
    QCOMPARE(format_counter(512, CounterUnit::Bytes), std::string("512 B"));
    QCOMPARE(format_counter(3.0 * 1024 * 1024, CounterUnit::Bytes), std::string("3.00 MiB"));
    QCOMPARE(format_counter(1.5 * 1024 * 1024 * 1024, CounterUnit::Bytes), std::string("1.50 GiB"));
    QCOMPARE(format_counter(42, CounterUnit::Count), std::string("42"));
  }

  void viewportHeldToTheTrace() {
    Viewport v = Viewport::fit(1000, 2000, 100);  // 10 ns a pixel
    v.zoom_around(50, 4);                         // out past the whole
    v.clamp_to(1000, 2000);
    QCOMPARE(v.start_ns, 1000.0);
    QCOMPARE(v.end_ns(), 2000.0);
    v.zoom_around(0, 0.1);  // 100 ns wide
    v.pan_px(-50);
    v.clamp_to(1000, 2000);
    QCOMPARE(v.start_ns, 1000.0);
    v.pan_px(1e6);
    v.clamp_to(1000, 2000);
    QCOMPARE(v.end_ns(), 2000.0);
    QVERIFY(std::abs(v.ns_per_px - 1.0) < 1e-9);  // the zoom stays
    // Epoch-ns times (doubles keep 256 ns there): still inside.
    const int64_t t0 = 1'700'000'000'000'000'000;
    Viewport e = Viewport::fit(t0, t0 + 1'000'000, 1000);
    e.pan_px(-1e6);
    e.clamp_to(t0, t0 + 1'000'000);
    QVERIFY(e.start_ns >= double(t0));
  }

  void hostColoursByCategory() {
    model::StringTable strings;
    model::StringId runtime = strings.intern("cuda_runtime"), annotation = strings.intern("user_annotation"),
                    op = strings.intern("cpu_op");
    std::vector<Rgb> by_cat = host_colours_by_category(strings);
    model::Event e = test::event(0, 10, model::IntervalClass::Host);
    e.cat = runtime;
    QCOMPARE(colour_of(e, &by_cat), kCudaApi);
    e.cat = annotation;
    QCOMPARE(colour_of(e, &by_cat), kUserRange);
    e.cat = op;
    QCOMPARE(colour_of(e, &by_cat), kHost);
    QCOMPARE(colour_of(e, nullptr), kHost);
    // A device event keeps its class colour whatever its category says.
    model::Event k = test::event(0, 10, model::IntervalClass::Compute);
    k.cat = runtime;
    QCOMPARE(colour_of(k, &by_cat), kCompute);
  }
};

QTEST_GUILESS_MAIN(TestViewerViews)
#include "tst_viewer_views.moc"
