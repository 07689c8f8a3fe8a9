// The Range dock: the measured range's time per class, overlap of communication with compute, exposed
// communication and idle share (the report's metrics over the range), or how to measure one.
#pragma once

#include <QDockWidget>

#include <optional>
#include <vector>

#include "viewer/model/range_stats.h"

class QLabel;

namespace shardscope::viewer {

class SelectionModel;

class RangeDock : public QDockWidget {
  Q_OBJECT
 public:
  RangeDock(SelectionModel* selection, QWidget* parent = nullptr);
  QString text() const;

 private:
  void refresh();
  SelectionModel* selection_;
  QLabel* stats_;
  std::vector<std::optional<RangeIndex>> index_;  // per rank, built on its first measurement
};

}  // namespace shardscope::viewer
