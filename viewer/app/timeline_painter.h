// Paints one frame of the timeline (TimelineFrame) with QPainter from the model's data (viewer/model): the
// rows, the label column, the ruler and what is drawn over the rows (search hits, the measured range, the
// selected event with its launch arrow). No widget state: what the widget knows comes in the frame and the
// arguments, so the window and the paint benchmark draw the same pixels.
#pragma once

#include <QFont>
#include <QLineF>

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "viewer/app/timeline_frame.h"
#include "viewer/model/flows.h"
#include "viewer/model/level_of_detail.h"
#include "viewer/model/marks.h"
#include "viewer/model/search.h"

class QPainter;

namespace shardscope::viewer {

// "1.234 ms", "12.0 µs", ...: the ruler's span, the tooltips' and the docks' durations.
QString format_ns(double ns);

// A flow as drawn: from the edge of its start facing its end to the edge of its end facing its start, at
// their left ends (where a launch's kernel or a rank's collective begins); none when an end is not laid out.
std::optional<QLineF> flow_line(const TimelineFrame& f, const Flow& flow);

class TimelinePainter {
 public:
  // `scratch` is reused from frame to frame (the marks of one row at a time).
  TimelinePainter(QPainter& p, const TimelineFrame& frame, const QFont& font, std::vector<Mark>& scratch)
      : p_(p), f_(frame), font_(font), marks_(scratch) {}

  // The rows (timeline_painter.cc): slices batched by colour, merged runs lighter, folded groups' summary
  // lanes, counters as area charts with their y axis, derived rows (FSDP units), names on slices wide enough;
  // the scrolling rows under the pinned ones, then the label column (folds, the lane cap's "+N") over them.
  void rows();
  // Where a dragged row would land: a line across at `y`.
  void dropLine(int y);
  // Over the rows (timeline_overlays.cc): search hits outlined, the measured range [lo, hi) tinted, the
  // selected event outlined (on its track and its derived rows) with the arrow from its launch.
  void highlights(const SearchResult& hits);
  void range(std::pair<int64_t, int64_t> r);
  void selection(uint32_t rank, model::EventRef event);
  // The selected event's flows: launch → kernel in red, from a folded group's summary lane where the host
  // call's row is folded; a collective's ranks in purple, each to the last arrival, which is outlined and
  // labelled with how late it was.
  void flows(const std::vector<Flow>& launches, const CollectiveFlows& collective);
  void ruler();
  // Marks (M): bands over every row and the ruler, drawn after the ruler so they show there too.
  void marks(const std::vector<TimeMark>& marks);
  // The rows of an area (a Shift+drag over rows) inside its range: a stronger tint than the range's.
  void areaRows(const std::vector<QRectF>& rects);

 private:
  void rowRange(size_t first, size_t last, int scroll, int clip_top);
  using ByColour = std::unordered_map<Rgb, std::vector<QRectF>>;
  void summaryLane(const Row& row, int y, ByColour& out);
  void counter(const Row& row, int y);
  void labels(size_t first, size_t last, int scroll, int clip_top);
  void clipToPlot();

  QPainter& p_;
  const TimelineFrame& f_;
  const QFont& font_;
  std::vector<Mark>& marks_;
  std::vector<uint32_t> tracks_, derived_;  // a folded row's members
};

}  // namespace shardscope::viewer
