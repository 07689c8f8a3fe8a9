// The Steps dock: each rank's steps with compute, communication (and its share of the step), overlapped
// and exposed communication (and the exposed share), overlap and idle; double-click zooms to the step.
#pragma once

#include "viewer/app/docks/table_dock.h"

namespace shardscope::viewer {

class SelectionModel;
class StepModel;

class StepsDock : public TableDock {
  Q_OBJECT
 public:
  StepsDock(SelectionModel* selection, QWidget* parent = nullptr);
  StepModel* model() const { return model_; }
  void jumpTo(int view_row);

 private:
  SelectionModel* selection_;
  StepModel* model_;
};

}  // namespace shardscope::viewer
