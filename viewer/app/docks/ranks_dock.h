// The Ranks dock: one kind of track (communication, compute, host) of every rank, a row per rank, lined up
// on a chosen step (each rank's step start at x = 0) or on a collective instance (its arrivals on the shared
// wall clock, the earliest at x = 0), so a late rank shows at a glance. Slices whose rank the straggler
// analysis names last at their collective are outlined in black; on an instance, the last arrival is
// outlined red and a prefetch pair's late peer dashed magenta (viewer/model/across_ranks.h). It aligns on an
// instance when SelectionModel::acrossRanksRequested asks (a Prefetch row, a collective clicked in the
// timeline) and comes to the front. Rows go worst first (the last arrival, then by arrival; on a step the
// longest step) in a scroll area, so any rank count fits. Wheel zooms around the cursor, drag pans.
#pragma once

#include <QDockWidget>
#include <QWidget>

#include <optional>
#include <vector>

#include "viewer/model/across_ranks.h"
#include "viewer/model/viewport.h"

class QComboBox;
class QLabel;

namespace shardscope::viewer {

class SelectionModel;
class TimelineLayout;

// The rows, painted; time is relative to each row's origin (x = 0 at ns 0).
class RanksView : public QWidget {
  Q_OBJECT
 public:
  static constexpr int kLabelWidth = 110, kLaneHeight = 14, kRuler = 18;
  explicit RanksView(QWidget* parent = nullptr);
  void setRows(const TimelineLayout* layout, const AcrossRanks* across, const std::vector<RankRow>* rows);
  void fit(double lo_ns, double hi_ns);  // relative times
  const Viewport& viewport() const { return vp_; }
  // Where row `row`'s aligned instance is drawn (none off the view or without one).
  std::optional<QRectF> instanceRect(size_t row) const;

 protected:
  void paintEvent(QPaintEvent*) override;
  void resizeEvent(QResizeEvent*) override;
  void wheelEvent(QWheelEvent*) override;
  void mousePressEvent(QMouseEvent*) override;
  void mouseMoveEvent(QMouseEvent*) override;

 private:
  int rowHeight(const RankRow& row) const;
  const TimelineLayout* layout_ = nullptr;
  const AcrossRanks* across_ = nullptr;
  const std::vector<RankRow>* rows_ = nullptr;
  Viewport vp_;
  QPoint last_;
};

class RanksDock : public QDockWidget {
  Q_OBJECT
 public:
  RanksDock(SelectionModel* selection, QWidget* parent = nullptr);
  // Aligns on the instance of collective `event` of layout rank `rank` (its late peer marked) and raises.
  void showInstance(uint32_t rank, model::EventRef event);
  void alignOnStep(int64_t step);
  void setChoice(TrackChoice choice);
  const std::vector<RankRow>& rows() const { return rows_; }
  const std::optional<metrics::InstanceId>& instance() const { return instance_; }
  RanksView* view() const { return view_; }
  QLabel* note() const { return note_; }
  QComboBox* stepPicker() const { return step_; }

 private:
  void refresh();
  void realign();
  SelectionModel* selection_;
  AcrossRanks across_;
  std::vector<RankRow> rows_;
  TrackChoice choice_ = TrackChoice::Communication;
  std::optional<metrics::InstanceId> instance_;
  std::optional<uint32_t> asked_by_;
  int64_t step_number_ = 0;
  QComboBox *kind_, *step_;
  QLabel* note_;
  RanksView* view_;
};

}  // namespace shardscope::viewer
