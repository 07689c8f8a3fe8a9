#include "viewer/app/docks/area_dock.h"

#include <QApplication>
#include <QClipboard>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QKeyEvent>
#include <QSortFilterProxyModel>
#include <QTableView>

#include <algorithm>

#include "viewer/app/panels.h"
#include "viewer/app/selection_model.h"
#include "viewer/app/timeline_painter.h"

namespace shardscope::viewer {

void AreaModel::setGroups(std::vector<SliceGroup> groups) {
  beginResetModel();
  groups_ = std::move(groups);
  endResetModel();
}

QVariant AreaModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || size_t(index.row()) >= groups_.size()) return {};
  const SliceGroup& g = groups_[size_t(index.row())];
  const auto col = Column(index.column());
  if (role == Qt::TextAlignmentRole)
    return col == Name ? QVariant(Qt::AlignLeft | Qt::AlignVCenter) : QVariant(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ToolTipRole && col == Name) return QString::fromStdString(g.name);
  if (role != Qt::DisplayRole && role != kSortRole) return {};
  const bool sort = role == kSortRole;
  switch (col) {
    case Name: return QString::fromStdString(g.name);
    case Count: return sort ? QVariant(qulonglong(g.count)) : QVariant(QString::number(g.count));
    case Total: return sort ? QVariant(qlonglong(g.total_ns)) : QVariant(format_ns(double(g.total_ns)));
    case Mean: return sort ? QVariant(g.mean_ns()) : QVariant(format_ns(g.mean_ns()));
    case Max: return sort ? QVariant(qlonglong(g.max_ns)) : QVariant(format_ns(double(g.max_ns)));
    default: return {};
  }
}

QVariant AreaModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[] = {"Name", "Count", "Total", "Mean", "Max"};
  return section >= 0 && section < ColumnCount ? QVariant(tr(names[section])) : QVariant();
}

AreaDock::AreaDock(SelectionModel* selection, QWidget* parent)
    : TableDock(tr("Area"), new AreaModel, parent), selection_(selection) {
  model_ = static_cast<AreaModel*>(proxy_->sourceModel());
  model_->setParent(this);
  view_->setObjectName("areaTable");
  // The name takes the spare width, the numbers sit beside it rather than at the far edge.
  view_->horizontalHeader()->setStretchLastSection(false);
  view_->horizontalHeader()->setSectionResizeMode(AreaModel::Name, QHeaderView::Stretch);
  view_->installEventFilter(this);
  connect(selection_, &SelectionModel::runChanged, this, &AreaDock::refresh);
  connect(selection_, &SelectionModel::rangeChanged, this, &AreaDock::refresh);
  refresh();
}

void AreaDock::refresh() {
  const TimelineLayout* layout = selection_->layout();
  const auto& range = selection_->range();
  if (!layout || !range || range->tracks.empty()) {
    model_->setGroups({});
    setNote(tr("Shift+drag across rows on the timeline: the slices in that area, by name. Ctrl+C copies."));
    return;
  }
  model_->setGroups(area_slices(*layout, range->tracks, range->lo, range->hi));
  uint64_t slices = 0;
  for (const SliceGroup& g : model_->groups()) slices += g.count;
  // Whole durations of the slices the area touches, as Perfetto counts them (area_slices.h).
  setNote(tr("%1 slices, %2 names on %3 rows over %4 (whole durations of the slices it touches)")
              .arg(slices)
              .arg(model_->groups().size())
              .arg(range->tracks.size())
              .arg(format_ns(double(range->hi - range->lo))));
}

QString AreaDock::copyText() const {
  std::vector<int> rows;
  for (const QModelIndex& i : view_->selectionModel()->selectedRows()) rows.push_back(i.row());
  if (rows.empty())
    for (int r = 0; r < proxy_->rowCount(); ++r) rows.push_back(r);
  std::sort(rows.begin(), rows.end());
  std::vector<SliceGroup> picked;
  for (int r : rows) picked.push_back(model_->groups()[size_t(sourceRow(r))]);
  return QString::fromStdString(area_tsv(picked));
}

void AreaDock::copy() const { QApplication::clipboard()->setText(copyText()); }

bool AreaDock::eventFilter(QObject* watched, QEvent* event) {
  // Ctrl+C is the table's own (it would copy one cell): the dock's rows as text instead.
  if (watched == view_ && (event->type() == QEvent::ShortcutOverride || event->type() == QEvent::KeyPress) &&
      static_cast<QKeyEvent*>(event)->matches(QKeySequence::Copy)) {
    event->accept();
    if (event->type() == QEvent::KeyPress) copy();
    return true;
  }
  return TableDock::eventFilter(watched, event);
}

}  // namespace shardscope::viewer
