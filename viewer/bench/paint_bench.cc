// A frame as the window paints it: the real TimelineWidget (viewer/app) rendered by QPainter into a
// 1920x1080 QImage, on the generated 8-rank, 10-million-event run, fully zoomed out and at 1 % zoom; and
// the overview strip above it. Runs on the offscreen platform unless QT_QPA_PLATFORM says otherwise.
#include <benchmark/benchmark.h>

#include <QApplication>
#include <QImage>

#include <cstdlib>

#include "viewer/app/overview_widget.h"
#include "viewer/app/timeline_widget.h"
#include "viewer/bench/generated_run.h"

using namespace shardscope;

namespace {

const viewer::TimelineLayout& layout() {
  static const viewer::TimelineLayout l(bench::trace());
  return l;
}

void paint_bench(benchmark::State& state, double fraction) {
  viewer::SelectionModel selection;  // nothing selected: the frame is the rows and the ruler
  viewer::TimelineWidget w(&selection);
  w.resize(1920, 1080);
  w.setTimeline(&layout());
  viewer::Viewport vp = w.viewport();
  double span = vp.ns_per_px * vp.width_px;
  vp.start_ns += span * (1 - fraction) / 2;
  vp.ns_per_px *= fraction;
  w.setViewport(vp);
  QImage image(1920, 1080, QImage::Format_ARGB32_Premultiplied);
  for (auto _ : state) {
    w.render(&image);
    benchmark::DoNotOptimize(image.bits());
  }
  w.setTimeline(nullptr);
}
void BM_PaintZoomedOut(benchmark::State& state) { paint_bench(state, 1.0); }
void BM_PaintOnePercent(benchmark::State& state) { paint_bench(state, 0.01); }
BENCHMARK(BM_PaintZoomedOut)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PaintOnePercent)->Unit(benchmark::kMillisecond);

void BM_PaintOverview(benchmark::State& state) {
  viewer::SelectionModel selection;
  viewer::TimelineWidget timeline(&selection);
  timeline.resize(1920, 1080);
  timeline.setTimeline(&layout());
  viewer::OverviewWidget w(&timeline);
  w.setTimeline(&layout());
  w.resize(1920, w.sizeHint().height());
  QImage image(w.size(), QImage::Format_ARGB32_Premultiplied);
  for (auto _ : state) {
    w.render(&image);
    benchmark::DoNotOptimize(image.bits());
  }
  w.setTimeline(nullptr);
  timeline.setTimeline(nullptr);
}
BENCHMARK(BM_PaintOverview)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  if (!std::getenv("QT_QPA_PLATFORM")) setenv("QT_QPA_PLATFORM", "offscreen", 1);
  QApplication app(argc, argv);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
