#include "viewer/app/docks/prefetch_dock.h"

#include <QLabel>
#include <QMenu>
#include <QSortFilterProxyModel>
#include <QTableView>

#include <algorithm>

#include "viewer/app/panels.h"
#include "viewer/app/selection_model.h"

namespace shardscope::viewer {

PrefetchDock::PrefetchDock(SelectionModel* selection, QWidget* parent)
    : TableDock(tr("Prefetch"), new PrefetchModel, parent), selection_(selection) {
  model_ = static_cast<PrefetchModel*>(proxy_->sourceModel());
  model_->setParent(this);
  note_->setObjectName("prefetchNote");
  connect(selection_, &SelectionModel::runChanged, this, &PrefetchDock::refresh);
  // Double-click: the pair's all-gather in the timeline, and that instance on every rank (Ranks dock).
  connect(view_, &QTableView::doubleClicked, this, [this](const QModelIndex& i) {
    jumpTo(i.row());
    showAcrossRanks(i.row());
  });
  view_->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(view_, &QWidget::customContextMenuRequested, this, [this](const QPoint& at) {
    QModelIndex i = view_->indexAt(at);
    if (!i.isValid()) return;
    QMenu menu(this);
    menu.addAction(tr("Jump to the all-gather"), this, [this, row = i.row()] { jumpTo(row); });
    menu.addAction(tr("Show this all-gather across ranks"), this, [this, row = i.row()] { showAcrossRanks(row); });
    menu.exec(view_->viewport()->mapToGlobal(at));
  });
  refresh();
}

void PrefetchDock::refresh() {
  model_->setRun(selection_->run());
  view_->resizeColumnsToContents();
  // Above the table: the verdict the report gives the run, or why there is no table.
  QString empty = model_->emptyReason();
  setNote(empty.isEmpty() ? model_->verdictText() : empty);
}

void PrefetchDock::jumpTo(int view_row) {
  if (!selection_->layout() || view_row < 0 || view_row >= model_->rowCount()) return;
  const PrefetchModel::Item& it = model_->item(sourceRow(view_row));
  const metrics::UnitPrefetch& u = *it.unit;
  if (!u.all_gather.valid()) return;
  model::EventRef ag{uint32_t(u.all_gather.track), uint32_t(u.all_gather.index)};
  selection_->requestJump(it.rank, ag.track, std::min(u.ag_start_ns, u.compute_start_ns),
                          std::max(u.ag_end_ns, u.compute_end_ns), ag);
}

}  // namespace shardscope::viewer

namespace shardscope::viewer {

void PrefetchDock::showAcrossRanks(int view_row) {
  if (!selection_->layout() || view_row < 0 || view_row >= model_->rowCount()) return;
  const PrefetchModel::Item& it = model_->item(sourceRow(view_row));
  if (!it.unit->all_gather.valid()) return;
  selection_->showAcrossRanks(it.rank, {uint32_t(it.unit->all_gather.track), uint32_t(it.unit->all_gather.index)});
}

}  // namespace shardscope::viewer
