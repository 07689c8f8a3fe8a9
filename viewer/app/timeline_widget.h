// The timeline: input (zoom, pan, scroll, clicks, Shift+drag, keys, label drags) and geometry over a run's
// rows; it paints through TimelinePainter and shows and writes the one SelectionModel, holding no selection.
#pragma once

#include <QWidget>

#include <optional>
#include <utility>
#include <vector>

#include "viewer/app/selection_model.h"
#include "viewer/app/timeline_frame.h"
#include "viewer/app/timeline_painter.h"
#include "viewer/model/row_arrangement.h"
#include "viewer/model/timeline_layout.h"
#include "viewer/model/viewport.h"

class QMenu;
class QScrollBar;

namespace shardscope::viewer {

class TimelineWidget : public QWidget {
  Q_OBJECT
 public:
  static constexpr int kLabelWidth = 150;  // the label column's default width
  static constexpr int kMinLabelWidth = 80, kMaxLabelWidth = 600;
  static constexpr int kRulerHeight = TimelineFrame::kRulerHeight;

  // The selected event, the measured range and the search hits are `selection`'s (it must outlive this):
  // shown while its layout is this widget's, written by clicks, Shift+drags and Esc; its jumps move the view.
  explicit TimelineWidget(SelectionModel* selection, QWidget* parent = nullptr);
  SelectionModel* selectionModel() const { return selection_; }
  // `layout` must outlive its use here; nullptr clears the view.
  void setTimeline(const TimelineLayout* layout);
  const Viewport& viewport() const { return vp_; }
  const TimelineLayout* timelineLayout() const { return layout_; }
  int rowScroll() const { return y_scroll_; }  // pixels of rows scrolled off the top
  // The rows as arranged, their y in arrangement space: rowTop() gives a row's y in the widget.
  const std::vector<Row>& rows() const { return arrangement_.rows(); }
  const RowArrangement& arrangement() const { return arrangement_; }
  int rowTop(int row) const { return frame().row_top(row); }
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
  // Where a flow meets an event: its rect, or its span on the folded row that shows it (TimelineFrame::flow_rect).
  std::optional<QRectF> flowRect(uint32_t rank, model::EventRef ref) const;
  // The selected event's flows as drawn (launch → kernel, then a collective's ranks), in widget pixels.
  std::vector<QLineF> flowLines() const;
  // Where the derived rows in view (FSDP units) draw the same event, in widget pixels.
  std::vector<QRectF> derivedRects(uint32_t rank, model::EventRef ref) const;

  // Shows [lo, hi) with a margin and scrolls the row of (rank, track) into view.
  void zoomTo(int64_t lo, int64_t hi, uint32_t rank, uint32_t track);
  void zoomBy(double factor, double x);
  void panBy(double px);
  void setViewport(const Viewport& vp);
  // Off: the view may run past the run's ends (run B locked to A by step: step_lock.h). On by default.
  void setHeldToRun(bool on) { held_to_run_ = on; }
  // The area a Shift+drag from the first row to the last would make over [lo, hi) (absolute ns), shown with
  // a margin: what `--area` draws. False when nothing is open or no row is shown.
  bool selectAreaOverAllRows(int64_t lo, int64_t hi);
  void zoomToSelection();  // F: the measured range, else the selected event
  void zoomToAll();        // 0: the whole run
  void clearRange();       // Esc
  // M: marks the selected event or the measured range (whichever was chosen last), else the event under the
  // cursor; M on what is marked already takes the mark away.
  void markSelection();
  // The tracks a row stands for: its own, or a folded rank's or group's members (derived rows and counters
  // none: a derived row's slices are its tracks' own, counted there).
  std::vector<TrackRef> rowTracks(const Row& row) const;
  // What the tooltip at `pos` says ("" over nothing); the ToolTip event shows this.
  QString toolTipAt(QPoint pos) const;
  // "t = 1.234 ms" and the row under `pos`: the status bar's readout.
  QString cursorTextAt(QPoint pos) const;

 signals:
  void viewportChanged();
  void viewportResized();  // just before the viewportChanged of a resize (the user moved nothing)
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
  TimelineFrame frame() const;
  int plotWidth() const;
  // The selection model holds this layout's selection (not another run's, nor none).
  bool ownsSelection() const { return layout_ && selection_->layout() == layout_; }
  std::optional<EventSelection> selectedEvent() const;
  // The flows of the selected event (flows.h): none when nothing is selected.
  std::pair<std::vector<Flow>, CollectiveFlows> selectedFlows() const;
  // The range drawn: a Shift+drag's under way, else the selection model's.
  std::optional<std::pair<int64_t, int64_t>> shownRange() const;
  void arranged(bool user);  // after the arrangement changed: scroll range, repaint, and tell when the user did it
  void updateScrollBar();
  void changed();
  void clampView();
  // The event under `pos` (a track or derived row), as (layout rank, event).
  std::optional<EventSelection> eventAt(QPoint pos) const;
  void clickAt(QPoint pos);
  void scrollBy(int dy);
  // The tracks of the rows between widget y0 and y1: an area's rows.
  std::vector<TrackRef> tracksBetween(int y0, int y1) const;
  std::vector<QRectF> areaRects() const;  // where the area's rows are drawn, inside its range

  SelectionModel* selection_;
  const TimelineLayout* layout_ = nullptr;
  Viewport vp_;
  int y_scroll_ = 0;
  std::vector<Mark> marks_;  // reused every frame
  QPoint press_{}, last_{};
  std::optional<QPoint> hover_;  // the mouse over the widget: what M marks when nothing is selected
  bool held_to_run_ = true;
  bool pressed_ = false, dragging_ = false, selecting_ = false;
  // A Shift+drag under way: the range drawn until the release writes it to the selection model.
  std::optional<std::pair<int64_t, int64_t>> dragged_range_;
  int range_rank_ = -1;
  bool range_newer_ = false;  // the range was chosen after the event: M marks the range
  RowArrangement arrangement_;
  int label_width_ = kLabelWidth;
  QScrollBar* vbar_ = nullptr;
  enum class LabelDrag { None, Press, Reorder, Resize } label_drag_ = LabelDrag::None;
  int label_row_ = -1;  // the row whose label was pressed
};

}  // namespace shardscope::viewer
