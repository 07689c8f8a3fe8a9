// The Ranks overview dock: a run opened from its rank summaries, a row per rank (step time; compute,
// communication and exposed communication per step; how often the rank arrived last at a collective; the
// prefetch verdict), the straggler and the slowest ranks first, sortable by any column. No events are
// loaded; double-clicking a rank asks the window to load that rank's trace on its own (expandRequested).
// Its model is viewer/model/ranks_overview.h; the table here only shows and sorts it.
#pragma once

#include <QAbstractTableModel>
#include <QDockWidget>

#include <memory>

#include "viewer/model/ranks_overview.h"

class QLabel;
class QTableView;

namespace shardscope::viewer {

class RanksOverviewTable : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Rank, StepTime, Compute, Comm, Exposed, ExposedPct, TimesLast, Prefetch, Summary, ColumnCount };
  explicit RanksOverviewTable(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
  void setOverview(std::shared_ptr<const RanksOverview> overview);
  const RankOverviewRow& row(int r) const { return rows_[size_t(r)]; }

  int rowCount(const QModelIndex& = {}) const override { return int(rows_.size()); }
  int columnCount(const QModelIndex& = {}) const override { return ColumnCount; }
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;
  // By ranks_overview.h's sort_rows; column -1 (no header chosen): the slowest first.
  void sort(int column, Qt::SortOrder order) override;

 private:
  std::shared_ptr<const RanksOverview> overview_;
  std::vector<RankOverviewRow> rows_;
};

class RanksOverviewDock : public QDockWidget {
  Q_OBJECT
 public:
  explicit RanksOverviewDock(QWidget* parent = nullptr);
  void setOverview(std::shared_ptr<const RanksOverview> overview);
  void clear() { setOverview(nullptr); }
  const RanksOverview* overview() const { return overview_.get(); }
  QTableView* table() const { return view_; }
  QLabel* note() const { return note_; }
  RanksOverviewTable* model() const { return model_; }
  // What a double-click on a row does.
  void expand(int row);

 signals:
  void expandRequested(const shardscope::viewer::RankOverviewRow& row);

 private:
  std::shared_ptr<const RanksOverview> overview_;
  RanksOverviewTable* model_;
  QTableView* view_;
  QLabel* note_;
};

}  // namespace shardscope::viewer
