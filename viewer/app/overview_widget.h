// The overview strip above the timeline: the whole run, a row per rank shaded by how busy its tracks are
// (viewer/model/overview.h), the timeline's visible window outlined. A click or drag centres the timeline
// there, its zoom kept.
#pragma once

#include <QWidget>

#include "viewer/model/overview.h"

namespace shardscope::viewer {

class TimelineWidget;

class OverviewWidget : public QWidget {
  Q_OBJECT
 public:
  OverviewWidget(TimelineWidget* timeline, QWidget* parent = nullptr);
  // `layout` must outlive its use here; nullptr clears the strip.
  void setTimeline(const TimelineLayout* layout);
  const Overview& overview() const { return overview_; }
  QSize sizeHint() const override;

 protected:
  void paintEvent(QPaintEvent*) override;
  void mousePressEvent(QMouseEvent*) override;
  void mouseMoveEvent(QMouseEvent*) override;

 private:
  int stripWidth() const;
  void centreAt(double x);

  TimelineWidget* timeline_;
  const TimelineLayout* layout_ = nullptr;
  Overview overview_;
};

}  // namespace shardscope::viewer
