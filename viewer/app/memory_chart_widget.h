// The memory dock: per rank and category a bar for the measured peak and one for the ZeRO prediction,
// drawn from viewer/model/memory_chart.h (the report's comparison); the n/a reasons and how the model
// predicted are worded by report/memory_render.h, as in the report.
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

 protected:
  void paintEvent(QPaintEvent*) override;

 private:
  int contentHeight() const;
  MemoryChart chart_;
};

}  // namespace shardscope::viewer
