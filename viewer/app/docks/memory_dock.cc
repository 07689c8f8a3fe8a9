#include "viewer/app/docks/memory_dock.h"

#include <QScrollArea>

#include "viewer/app/memory_chart_widget.h"
#include "viewer/app/selection_model.h"

namespace shardscope::viewer {

MemoryDock::MemoryDock(SelectionModel* selection, QWidget* parent)
    : QDockWidget(tr("Memory"), parent), selection_(selection) {
  setObjectName("Memory");
  chart_ = new MemoryChartWidget(this);
  chart_->setObjectName("memoryChart");
  auto* scroll = new QScrollArea(this);
  scroll->setWidget(chart_);
  scroll->setWidgetResizable(true);
  setWidget(scroll);
  connect(selection_, &SelectionModel::runChanged, this, [this] {
    // A run being replaced is announced with none first; the chart keeps what it shows until the next.
    if (const analysis::AnalysedRun* run = selection_->run()) chart_->setChart(memory_chart(run->report));
  });
}

}  // namespace shardscope::viewer
