// The viewer's frame budget on a generated run: 8 ranks, 10 million events (host ranges three deep, a
// compute stream, a communication stream), built in memory with no JSON. Measures building the layout
// (depths, launch links, lane indexes), the level-of-detail marks of one frame fully zoomed out and at 1 %
// zoom, and the side tables' bytes per event.
#include <benchmark/benchmark.h>

#include "viewer/bench/generated_run.h"
#include "viewer/model/overview.h"
#include "viewer/model/search.h"
#include "viewer/model/timeline_layout.h"

using namespace shardscope;

namespace {

const viewer::TimelineLayout& layout() {
  static const viewer::TimelineLayout l(bench::trace());
  return l;
}

// One frame: the marks of every track row (all rows; the widget would skip rows out of view).
size_t frame(const viewer::TimelineLayout& l, const viewer::Viewport& vp, std::vector<viewer::Mark>& marks) {
  marks.clear();
  for (const viewer::Row& row : l.rows()) {
    if (row.kind != viewer::RowKind::Track) continue;
    const viewer::RankView& rv = l.ranks()[row.rank];
    viewer::track_marks(rv.rank->tracks[size_t(row.item)], rv.tracks[size_t(row.item)], vp, marks);
  }
  return marks.size();
}

void BM_LayoutBuild(benchmark::State& state) {
  const model::Trace& tr = bench::trace();
  size_t bytes = 0, events = 0;
  for (auto _ : state) {
    viewer::TimelineLayout l(tr);
    bytes = l.bytes();
    events = l.events();
    benchmark::DoNotOptimize(l.rows().data());
  }
  state.counters["events"] = double(events);
  state.counters["side_bytes_per_event"] = double(bytes) / double(events);
}
BENCHMARK(BM_LayoutBuild)->Unit(benchmark::kMillisecond)->Iterations(3);

void frame_bench(benchmark::State& state, double fraction) {
  const viewer::TimelineLayout& l = layout();
  double span = double(l.end_ns() - l.start_ns());
  viewer::Viewport vp = viewer::Viewport::fit(l.start_ns(), l.end_ns(), 1920);
  vp.ns_per_px *= fraction;
  vp.start_ns = double(l.start_ns()) + span * (1 - fraction) / 2;
  std::vector<viewer::Mark> marks;
  size_t n = 0;
  for (auto _ : state) n = frame(l, vp, marks);
  state.counters["marks"] = double(n);
}
void BM_FrameZoomedOut(benchmark::State& state) { frame_bench(state, 1.0); }
void BM_FrameOnePercent(benchmark::State& state) { frame_bench(state, 0.01); }
BENCHMARK(BM_FrameZoomedOut)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FrameOnePercent)->Unit(benchmark::kMillisecond);

// The overview strip's bins: once per opened run.
void BM_Overview(benchmark::State& state) {
  const viewer::TimelineLayout& l = layout();
  for (auto _ : state) benchmark::DoNotOptimize(viewer::build_overview(l).density.data());
}
BENCHMARK(BM_Overview)->Unit(benchmark::kMillisecond);

// Search by name: a rare name (the all-gathers, 1 event in 100) and a common one (the GEMMs, 1 in 3).
void search_bench(benchmark::State& state, const char* text) {
  const viewer::TimelineLayout& l = layout();
  size_t hits = 0;
  for (auto _ : state) hits = viewer::search_names(l, text).hits.size();
  state.counters["hits"] = double(hits);
}
void BM_SearchRare(benchmark::State& state) { search_bench(state, "allgather"); }
void BM_SearchCommon(benchmark::State& state) { search_bench(state, "GEMM"); }
BENCHMARK(BM_SearchRare)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SearchCommon)->Unit(benchmark::kMillisecond);

}  // namespace
