// The FSDP panels' table models, built from the report the CLI prints (analysis::AnalysedRun::report):
// the prefetch check per unit pair, and the per-rank step summary. Models only; the window puts them in
// QTableViews and turns a double-click into a jump on the timeline.
#pragma once

#include <QAbstractTableModel>

#include <vector>

#include "analyzer/analysis/run.h"

namespace shardscope::viewer {

class PrefetchModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  struct Item {
    uint32_t rank = 0;  // index into trace.ranks (== report.ranks)
    const metrics::StepPrefetch* step = nullptr;
    const metrics::UnitPrefetch* unit = nullptr;
  };
  explicit PrefetchModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
  void setRun(const analysis::AnalysedRun* run);
  const Item& item(int row) const { return items_[size_t(row)]; }

  int rowCount(const QModelIndex& = {}) const override { return int(items_.size()); }
  int columnCount(const QModelIndex& = {}) const override { return 7; }
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  const analysis::AnalysedRun* run_ = nullptr;
  std::vector<Item> items_;
};

class StepModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  struct Item {
    uint32_t rank = 0;
    const report::StepRow* step = nullptr;
  };
  explicit StepModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
  void setRun(const analysis::AnalysedRun* run);
  const Item& item(int row) const { return items_[size_t(row)]; }

  int rowCount(const QModelIndex& = {}) const override { return int(items_.size()); }
  int columnCount(const QModelIndex& = {}) const override { return 9; }
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  const analysis::AnalysedRun* run_ = nullptr;
  std::vector<Item> items_;
};

}  // namespace shardscope::viewer
