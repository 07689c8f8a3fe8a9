// One frame of the timeline in widget pixels: where its rows, events and times are. The widget makes one for
// each paint and each question about a position (a click, a tooltip); the painter draws from the same one.
#pragma once

#include <QPoint>
#include <QRectF>

#include <optional>
#include <vector>

#include "model/index.h"
#include "viewer/model/row_arrangement.h"
#include "viewer/model/timeline_layout.h"
#include "viewer/model/viewport.h"

namespace shardscope::viewer {

struct TimelineFrame {
  static constexpr int kRulerHeight = 24;  // the time ruler above the rows

  const TimelineLayout* layout = nullptr;  // non-null for every method but row_top
  const RowArrangement* rows = nullptr;
  Viewport vp;
  int label_width = 0, plot_width = 1;  // the plot: right of the label column, left of the scrollbar
  int width = 0, height = 0;            // the widget's
  int y_scroll = 0;                     // pixels of the scrolling rows above the view

  // A row's top in the widget: pinned rows hold still above the scrolling ones.
  int row_top(int row) const;
  // The arranged row under `pos` (and its lane), or -1.
  int row_at(QPoint pos, int* lane = nullptr) const;
  double x_of(double ns) const { return label_width + vp.x_of(ns); }
  // Where an event is drawn on its track's row (none when that row is not arranged).
  std::optional<QRectF> event_rect(uint32_t rank, model::EventRef ref) const;
  // Where a flow meets an event: its own rect, else its span on the summary lane of the folded group or rank
  // that shows its track (none when hidden or filtered out).
  std::optional<QRectF> flow_rect(uint32_t rank, model::EventRef ref) const;
  // Where the derived rows (FSDP units) draw the same event.
  std::vector<QRectF> derived_rects(uint32_t rank, model::EventRef ref) const;
};

}  // namespace shardscope::viewer
