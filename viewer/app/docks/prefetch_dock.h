// The Prefetch dock: the prefetch check per unit pair (whether its backward all-gather hid, hidden share,
// exposed wait, cause), under the run's verdict per rank and the warm-up note; when there is nothing to
// check it says why (the analyzer's reason). Double-click jumps to the pair's all-gather and shows it across
// ranks (the Ranks dock); the context menu offers each.
#pragma once

#include "viewer/app/docks/table_dock.h"

namespace shardscope::viewer {

class SelectionModel;
class PrefetchModel;

class PrefetchDock : public TableDock {
  Q_OBJECT
 public:
  PrefetchDock(SelectionModel* selection, QWidget* parent = nullptr);
  PrefetchModel* model() const { return model_; }
  void jumpTo(int view_row);
  // The pair's all-gather on every rank (SelectionModel::showAcrossRanks).
  void showAcrossRanks(int view_row);

 private:
  void refresh();
  SelectionModel* selection_;
  PrefetchModel* model_;
};

}  // namespace shardscope::viewer
