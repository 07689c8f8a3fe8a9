// What the Steps and Prefetch docks share: a sortable read-only table over one of the panels' models
// (sorted through a proxy by kSortRole, so durations sort as numbers), with a note above it.
#pragma once

#include <QDockWidget>

class QAbstractItemModel;
class QLabel;
class QScrollArea;
class QSortFilterProxyModel;
class QTableView;

namespace shardscope::viewer {

class TableDock : public QDockWidget {
  Q_OBJECT
 public:
  QTableView* table() const { return view_; }
  QLabel* note() const { return note_; }
  // The source model's row behind a row of the (sorted) view.
  int sourceRow(int view_row) const;

 protected:
  TableDock(const QString& title, QAbstractItemModel* model, QWidget* parent);
  // The note's text; hidden when empty.
  void setNote(const QString& text);
  QSortFilterProxyModel* proxy_;
  QTableView* view_;
  QLabel* note_;
  QScrollArea* note_box_;  // holds note_: a few lines high at most, the rest scrolls
};

}  // namespace shardscope::viewer
