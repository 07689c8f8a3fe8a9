// The Comparison dock: the A/B diff (analysis::diff_runs) as a sortable table, a row per metric and rank
// pair: metric, A, B and the change B − A (and its share of A). The runs are named "A" (the open run) and
// "B" (the run opened for comparison); their folders are in the A and B headers' tooltips, not in the cells.
// The device activities whose time changed most follow each rank pair's metrics. Rank, A, B and Change
// are as wide as their numbers; Metric takes the rest of the width.
#pragma once

#include <QAbstractTableModel>

#include <optional>
#include <vector>

#include "analyzer/analysis/diff.h"
#include "viewer/app/docks/table_dock.h"

namespace shardscope::viewer {

class ComparisonModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Rank, Metric, A, B, Change, ColumnCount };
  struct Item {
    QString rank, metric;
    std::optional<double> a, b;
    QString why_a, why_b;  // why a side is missing (the analysis's reason)
  };
  explicit ComparisonModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
  // `a_inputs`, `b_inputs`: the runs' paths, for the headers' tooltips.
  void setDiff(const analysis::RunDiff& d, const QStringList& a_inputs, const QStringList& b_inputs);
  void clear();
  const Item& item(int row) const { return items_[size_t(row)]; }

  int rowCount(const QModelIndex& = {}) const override { return int(items_.size()); }
  int columnCount(const QModelIndex& = {}) const override { return ColumnCount; }
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  std::vector<Item> items_;
  QStringList a_inputs_, b_inputs_;
};

class ComparisonDock : public TableDock {
  Q_OBJECT
 public:
  explicit ComparisonDock(QWidget* parent = nullptr);
  ComparisonModel* model() const { return model_; }
  void setDiff(const analysis::RunDiff& d, const QStringList& a_inputs, const QStringList& b_inputs);
  void clear();  // no comparison: says how to make one

 private:
  ComparisonModel* model_;
};

}  // namespace shardscope::viewer
