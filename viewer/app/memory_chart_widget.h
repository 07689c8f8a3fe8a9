// The memory dock: per rank and category a bar for the measured peak and one for the ZeRO prediction,
// drawn from viewer/model/memory_chart.h (the report's comparison); the n/a reasons and how the model
// predicted are worded by report/memory_render.h, as in the report. The value column is as wide as its
// longest text; the model's assumptions (how it predicted, its inputs) are a rank's tooltip.
#pragma once

#include <QWidget>

#include "viewer/model/memory_chart.h"

namespace shardscope::viewer {

class MemoryChartWidget : public QWidget {
  Q_OBJECT
 public:
  explicit MemoryChartWidget(QWidget* parent = nullptr);
  void setChart(MemoryChart chart);
  const MemoryChart& chart() const { return chart_; }
  QSize sizeHint() const override;
  // "measured / predicted (±d %)" of a bar, in MB, as drawn.
  static QString valueText(const MemoryBar& b);
  int valueColumnWidth() const { return value_width_; }
  // The model's assumptions for the rank under `pos` (its header or bars), as the tooltip shows them.
  QString toolTipAt(QPoint pos) const;

 protected:
  void paintEvent(QPaintEvent*) override;
  bool event(QEvent* e) override;

 private:
  int contentHeight() const;
  MemoryChart chart_;
  int value_width_ = 170;
};

}  // namespace shardscope::viewer
