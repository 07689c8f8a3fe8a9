#include "viewer/app/docks/table_dock.h"

#include <QHeaderView>
#include <QLabel>
#include <QScrollArea>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

#include "viewer/app/panels.h"

namespace shardscope::viewer {

TableDock::TableDock(const QString& title, QAbstractItemModel* model, QWidget* parent) : QDockWidget(title, parent) {
  setObjectName(title);
  auto* box = new QWidget(this);
  auto* v = new QVBoxLayout(box);
  v->setContentsMargins(2, 2, 2, 2);
  note_ = new QLabel(box);
  note_->setWordWrap(true);
  note_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  // The note can hold a line per rank: it scrolls within a few lines' height, so a thousand ranks do not
  // set the dock's (and the window's) minimum height.
  note_box_ = new QScrollArea(box);
  note_box_->setWidget(note_);
  note_box_->setWidgetResizable(true);
  note_box_->setFrameShape(QFrame::NoFrame);
  note_box_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  note_box_->setMaximumHeight(6 * note_->fontMetrics().lineSpacing() + 4);
  note_box_->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Maximum);
  note_box_->hide();
  proxy_ = new QSortFilterProxyModel(this);
  proxy_->setSourceModel(model);
  proxy_->setSortRole(kSortRole);
  view_ = new QTableView(box);
  view_->setModel(proxy_);
  view_->setSortingEnabled(true);
  view_->sortByColumn(-1, Qt::AscendingOrder);  // the model's own order (rank, step) until a header is clicked
  view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  view_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  view_->verticalHeader()->hide();
  view_->horizontalHeader()->setStretchLastSection(true);
  v->addWidget(note_box_);
  v->addWidget(view_, 1);
  setWidget(box);
}

void TableDock::setNote(const QString& text) {
  note_->setText(text);
  note_box_->setVisible(!text.isEmpty());
}

int TableDock::sourceRow(int view_row) const { return proxy_->mapToSource(proxy_->index(view_row, 0)).row(); }

}  // namespace shardscope::viewer
