// The FSDP panels' table models, built from the report the CLI prints (analysis::AnalysedRun::report):
// the prefetch check per unit pair, and the per-rank step summary. Models only; the docks put them in
// sortable QTableViews (kSortRole: the number behind each cell) and turn a double-click into a jump.
#pragma once

#include <QAbstractTableModel>

#include <vector>

#include "analyzer/analysis/run.h"

namespace shardscope::viewer {

// The value a column sorts by: numbers as numbers ("9.5 ms" before "10.0 ms"), text as text.
inline constexpr int kSortRole = Qt::UserRole + 1;

class PrefetchModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Rank, Step, Unit, Pair, Hidden, ExposedWait, Cause, ColumnCount };
  struct Item {
    uint32_t rank = 0;  // index into trace.ranks (== report.ranks)
    const metrics::StepPrefetch* step = nullptr;
    const metrics::UnitPrefetch* unit = nullptr;
  };
  explicit PrefetchModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
  void setRun(const analysis::AnalysedRun* run);
  const Item& item(int row) const { return items_[size_t(row)]; }
  // The run's verdict, rank by rank (report::run_sentence), and the run rule's warm-up note.
  QString verdictText() const;
  // Why the table is empty ("" when it is not): the analyzer's reason per rank.
  QString emptyReason() const;

  int rowCount(const QModelIndex& = {}) const override { return int(items_.size()); }
  int columnCount(const QModelIndex& = {}) const override { return ColumnCount; }
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  const analysis::AnalysedRun* run_ = nullptr;
  std::vector<Item> items_;
};

class StepModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    Rank,
    Step,
    Window,
    Compute,
    Comm,
    CommPct,
    Overlapped,
    Exposed,
    ExposedPct,
    Overlap,
    Idle,
    IdlePct,
    ColumnCount
  };
  struct Item {
    uint32_t rank = 0;
    const report::StepRow* step = nullptr;
  };
  explicit StepModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
  void setRun(const analysis::AnalysedRun* run);
  const Item& item(int row) const { return items_[size_t(row)]; }

  int rowCount(const QModelIndex& = {}) const override { return int(items_.size()); }
  int columnCount(const QModelIndex& = {}) const override { return ColumnCount; }
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  const analysis::AnalysedRun* run_ = nullptr;
  std::vector<Item> items_;
};

}  // namespace shardscope::viewer
