// The Memory dock: per rank and category the measured peak beside the ZeRO prediction (the report's memory
// comparison, viewer/model/memory_chart.h), redrawn when the shared selection's run changes.
#pragma once

#include <QDockWidget>

namespace shardscope::viewer {

class MemoryChartWidget;
class SelectionModel;

class MemoryDock : public QDockWidget {
  Q_OBJECT
 public:
  MemoryDock(SelectionModel* selection, QWidget* parent = nullptr);
  MemoryChartWidget* chart() const { return chart_; }

 private:
  SelectionModel* selection_;
  MemoryChartWidget* chart_;
};

}  // namespace shardscope::viewer
