#include "viewer/app/docks/steps_dock.h"

#include <QSortFilterProxyModel>
#include <QTableView>

#include "viewer/app/panels.h"
#include "viewer/app/selection_model.h"

namespace shardscope::viewer {

StepsDock::StepsDock(SelectionModel* selection, QWidget* parent)
    : TableDock(tr("Steps"), new StepModel, parent), selection_(selection) {
  model_ = static_cast<StepModel*>(proxy_->sourceModel());
  model_->setParent(this);
  connect(selection_, &SelectionModel::runChanged, this, [this] {
    model_->setRun(selection_->run());
    view_->resizeColumnsToContents();
  });
  connect(view_, &QTableView::doubleClicked, this, [this](const QModelIndex& i) { jumpTo(i.row()); });
}

void StepsDock::jumpTo(int view_row) {
  const TimelineLayout* layout = selection_->layout();
  if (!layout || view_row < 0 || view_row >= model_->rowCount()) return;
  const StepModel::Item& it = model_->item(sourceRow(view_row));
  const RankView& rv = layout->ranks()[it.rank];
  // Scroll to the rank's first track row.
  for (uint32_t t = 0; t < rv.rank->tracks.size(); ++t)
    if (layout->row_of_track(it.rank, t) >= 0) {
      selection_->requestJump(it.rank, t, it.step->step.start_ns, it.step->step.end_ns);
      break;
    }
}

}  // namespace shardscope::viewer
