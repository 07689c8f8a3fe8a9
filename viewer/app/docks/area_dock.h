// The Area dock: the slices of an area (a Shift+drag over rows) by name, with count, total, mean and max
// duration, heaviest total first (viewer/model/area_slices.h); Ctrl+C copies the selected rows (all when
// none is selected) as tab-separated text with a header line.
#pragma once

#include <QAbstractTableModel>

#include <vector>

#include "viewer/app/docks/table_dock.h"
#include "viewer/model/area_slices.h"

namespace shardscope::viewer {

class SelectionModel;

class AreaModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Name, Count, Total, Mean, Max, ColumnCount };
  explicit AreaModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
  void setGroups(std::vector<SliceGroup> groups);
  const std::vector<SliceGroup>& groups() const { return groups_; }

  int rowCount(const QModelIndex& = {}) const override { return int(groups_.size()); }
  int columnCount(const QModelIndex& = {}) const override { return ColumnCount; }
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  std::vector<SliceGroup> groups_;
};

class AreaDock : public TableDock {
  Q_OBJECT
 public:
  AreaDock(SelectionModel* selection, QWidget* parent = nullptr);
  const AreaModel* model() const { return model_; }
  // What Ctrl+C puts on the clipboard: the selected rows in the table's order, or every row.
  QString copyText() const;
  void copy() const;

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void refresh();
  SelectionModel* selection_;
  AreaModel* model_;
};

}  // namespace shardscope::viewer
