// The timeline: one group per rank, a row per track, painted from the level-of-detail marks of the rows in
// view (viewer/model), rectangles batched by colour. Wheel and W/S zoom, drag and A/D pan (both held to the
// trace's ends), F zooms to the selection, 0 shows the whole run, Shift+wheel scrolls rows, Shift+drag
// selects a time range and Esc clears it; a click selects an event. Search hits are outlined. Hovering
// gives a tooltip (a slice's name, duration, class, unit and step; a counter's value) and reports the time
// under the cursor (cursorMoved). Counter rows carry their y axis (bottom and top, in the counter's unit).
// The rows are arranged by the user (viewer/model/row_arrangement.h): a click on a rank's or group's label
// folds it to one summary lane, dragging a label reorders rows within their group, the label's context menu
// pins (pinned rows stay above the scrolling ones), hides and shows rows, and the label column's edge drags
// to resize it. A scrollbar at the right scrolls the rows.
#pragma once

#include <QWidget>

#include <optional>
#include <vector>

#include "model/index.h"
#include "viewer/model/row_arrangement.h"
#include "viewer/model/search.h"
#include "viewer/model/timeline_layout.h"
#include "viewer/model/viewport.h"

class QMenu;
class QScrollBar;

namespace shardscope::viewer {

struct Selection {
  uint32_t rank = 0;  // layout rank
  model::EventRef event;
};

class TimelineWidget : public QWidget {
  Q_OBJECT
 public:
  static constexpr int kLabelWidth = 150;  // the label column's default width
  static constexpr int kMinLabelWidth = 80, kMaxLabelWidth = 600;
  static constexpr int kRulerHeight = 24;

  explicit TimelineWidget(QWidget* parent = nullptr);
  // `layout` must outlive its use here; nullptr clears the view.
  void setTimeline(const TimelineLayout* layout);
  const Viewport& viewport() const { return vp_; }
  const TimelineLayout* timelineLayout() const { return layout_; }
  const std::optional<Selection>& selection() const { return selection_; }
  int rowScroll() const { return y_scroll_; }  // pixels of rows scrolled off the top
  // The rows as arranged, their y in arrangement space: rowTop() gives a row's y in the widget.
  const std::vector<Row>& rows() const { return arrangement_.rows(); }
  const RowArrangement& arrangement() const { return arrangement_; }
  int rowTop(int row) const;
  int rowAtPos(QPoint pos, int* lane = nullptr) const;  // the arranged row under `pos`, or -1
  int labelWidth() const { return label_width_; }
  void setLabelWidth(int px);  // held to [kMinLabelWidth, kMaxLabelWidth]
  QScrollBar* rowScrollBar() const { return vbar_; }
  void setRowFilter(const QString& text);
  // The arrangement as text (RowArrangement::save) and back; restore returns false on text it cannot read.
  QString saveArrangement() const;
  bool restoreArrangement(const QString& text);
  // The label context menu at `pos` (pin, hide, fold, show hidden, reset); the caller owns it.
  QMenu* rowMenu(QPoint pos);
  // Where an event is drawn, in widget pixels (none when its row is not laid out).
  std::optional<QRectF> eventRect(uint32_t rank, model::EventRef ref) const;
  // Where the derived rows in view (FSDP units) draw the same event, in widget pixels.
  std::vector<QRectF> derivedRects(uint32_t rank, model::EventRef ref) const;

  void select(const std::optional<Selection>& s);
  // Shows [lo, hi) with a margin and scrolls the row of (rank, track) into view.
  void zoomTo(int64_t lo, int64_t hi, uint32_t rank, uint32_t track);
  void zoomBy(double factor, double x);
  void panBy(double px);
  void setViewport(const Viewport& vp);
  void zoomToSelection();  // F: the measured range, else the selected event
  void zoomToAll();        // 0: the whole run
  void clearRange();       // Esc
  const std::optional<std::pair<int64_t, int64_t>>& range() const { return range_; }
  // What the tooltip at `pos` says ("" over nothing); the ToolTip event shows this.
  QString toolTipAt(QPoint pos) const;
  // "t = 1.234 ms" and the row under `pos`: the status bar's readout.
  QString cursorTextAt(QPoint pos) const;
  // Search hits to outline (nullptr: none); `result` must outlive its use here.
  void setHighlights(const SearchResult* result);

 signals:
  void viewportChanged();
  void eventSelected(uint32_t rank, uint32_t track, uint32_t index);
  void rangeSelected(uint32_t rank, qint64 lo, qint64 hi);
  void rangeCleared();
  void selectionCleared();
  void cursorMoved(const QString& text);
  void arrangementChanged();  // folded, pinned, moved, hidden or resized by the user: worth saving

 protected:
  bool event(QEvent*) override;
  void leaveEvent(QEvent*) override;
  void paintEvent(QPaintEvent*) override;
  void resizeEvent(QResizeEvent*) override;
  void wheelEvent(QWheelEvent*) override;
  void keyPressEvent(QKeyEvent*) override;
  void mousePressEvent(QMouseEvent*) override;
  void mouseMoveEvent(QMouseEvent*) override;
  void mouseReleaseEvent(QMouseEvent*) override;
  void contextMenuEvent(QContextMenuEvent*) override;

 private:
  int plotWidth() const;
  void paintRowRange(QPainter& p, size_t first, size_t last, int scroll, int clip_top);
  void paintLabels(QPainter& p, size_t first, size_t last, int scroll, int clip_top);
  void arranged(bool user);  // after the arrangement changed: scroll range, repaint, and tell when the user did it
  void updateScrollBar();
  void paintRuler(class QPainter& p);
  void paintRows(QPainter& p);
  void paintCounter(QPainter& p, const Row& row, int y);
  void paintSelection(QPainter& p);
  void paintHighlights(QPainter& p);
  void changed();
  void clampView();
  // The event under `pos` (a track row), as (layout rank, event).
  std::optional<Selection> eventAt(QPoint pos) const;
  void clickAt(QPoint pos);
  void scrollBy(int dy);

  const TimelineLayout* layout_ = nullptr;
  Viewport vp_;
  int y_scroll_ = 0;
  std::optional<Selection> selection_;
  const SearchResult* highlights_ = nullptr;
  std::optional<std::pair<int64_t, int64_t>> range_;
  std::vector<Mark> marks_;  // reused every frame
  QPoint press_{}, last_{};
  bool pressed_ = false, dragging_ = false, selecting_ = false;
  int range_rank_ = -1;
  RowArrangement arrangement_;
  int label_width_ = kLabelWidth;
  QScrollBar* vbar_ = nullptr;
  enum class LabelDrag { None, Press, Reorder, Resize } label_drag_ = LabelDrag::None;
  int label_row_ = -1;  // the row whose label was pressed
};

// "1.234 ms", "12.0 µs", ...
QString format_ns(double ns);

}  // namespace shardscope::viewer
