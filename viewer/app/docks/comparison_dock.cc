#include "viewer/app/docks/comparison_dock.h"

#include <QHeaderView>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QTableView>

#include <cmath>

#include "analyzer/report/collectives_render.h"
#include "analyzer/report/sentences.h"
#include "viewer/app/panels.h"

namespace shardscope::viewer {

namespace {
QString qs(const std::string& s) { return QString::fromStdString(s); }
QString num(const std::optional<double>& v) {
  return v ? QString::number(std::fabs(*v) < 5e-4 ? 0.0 : *v, 'f', 3) : QStringLiteral("n/a");
}
// Why a side is missing: the collectives table's code when the row has one, else the analysis's reason.
QString why(metrics::CollectiveNa coll, analysis::Na na, model::CollectiveKind kind) {
  return qs(coll != metrics::CollectiveNa::None ? report::na_text(coll, kind) : report::na_text(na, kind));
}
}  // namespace

void ComparisonModel::clear() {
  beginResetModel();
  items_.clear();
  endResetModel();
}

void ComparisonModel::setDiff(const analysis::RunDiff& d, const QStringList& a_inputs, const QStringList& b_inputs) {
  beginResetModel();
  items_.clear();
  a_inputs_ = a_inputs;
  b_inputs_ = b_inputs;
  for (const analysis::RankDiff& rd : d.ranks) {
    QString rank =
        rd.rank_a == rd.rank_b ? QString::number(rd.rank_a) : QStringLiteral("%1 / %2").arg(rd.rank_a).arg(rd.rank_b);
    for (const analysis::DiffRow& r : rd.rows)
      items_.push_back({rank, qs(r.metric), r.a, r.b, r.a ? QString() : why(r.coll_na_a, r.na_a, r.kind),
                        r.b ? QString() : why(r.coll_na_b, r.na_b, r.kind)});
    for (const analysis::DeviceChange& c : rd.largest_changes)
      items_.push_back(
          {rank, tr("device time ms: %1").arg(qs(c.name)), double(c.a_ns) / 1e6, double(c.b_ns) / 1e6, {}, {}});
  }
  endResetModel();
}

QVariant ComparisonModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || (role != Qt::DisplayRole && role != Qt::ToolTipRole && role != kSortRole)) return {};
  const Item& it = items_[size_t(index.row())];
  const bool both = it.a && it.b;
  const double change = both ? *it.b - *it.a : 0;
  if (role == Qt::ToolTipRole) {
    if (index.column() == A && !it.a) return tr("n/a in A: %1").arg(it.why_a);
    if (index.column() == B && !it.b) return tr("n/a in B: %1").arg(it.why_b);
    if (index.column() == Metric) return it.metric;  // device activity names can be long
    return {};
  }
  if (role == kSortRole) {
    switch (index.column()) {
      case Rank: return it.rank;
      case Metric: return it.metric;
      case A: return it.a ? *it.a : -INFINITY;
      case B: return it.b ? *it.b : -INFINITY;
      case Change: return both ? change : -INFINITY;
    }
    return {};
  }
  switch (index.column()) {
    case Rank: return it.rank;
    case Metric: return it.metric;
    case A: return num(it.a);
    case B: return num(it.b);
    case Change: {
      if (!both) return QStringLiteral("n/a");
      QString s = (change >= 0 ? "+" : "") + num(change);
      if (std::fabs(*it.a) > 1e-12)
        s += QStringLiteral(" (%1%2 %)").arg(change >= 0 ? "+" : "").arg(100 * change / std::fabs(*it.a), 0, 'f', 1);
      return s;
    }
  }
  return {};
}

QVariant ComparisonModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal) return {};
  if (role == Qt::ToolTipRole) {
    if (section == A) return tr("A, the open run:\n%1").arg(a_inputs_.join('\n'));
    if (section == B) return tr("B, the run opened for comparison:\n%1").arg(b_inputs_.join('\n'));
    if (section == Change) return tr("B − A, and its share of A");
    return {};
  }
  if (role != Qt::DisplayRole) return {};
  static const char* names[] = {"Rank", "Metric", "A", "B", "Change"};
  return tr(names[section]);
}

ComparisonDock::ComparisonDock(QWidget* parent) : TableDock(tr("Comparison"), new ComparisonModel, parent) {
  model_ = static_cast<ComparisonModel*>(proxy_->sourceModel());
  model_->setParent(this);
  note_->setObjectName("comparisonNote");
  // The numbers keep the width they need; the metric takes what is left, cut in the middle (a device
  // activity's name runs to hundreds of characters: its tooltip has it whole). Sized to its content it
  // took the whole width and pushed A, B and the change off-screen.
  QHeaderView* h = view_->horizontalHeader();
  h->setStretchLastSection(false);
  h->setSectionResizeMode(QHeaderView::Interactive);
  h->setSectionResizeMode(ComparisonModel::Metric, QHeaderView::Stretch);
  h->setMinimumSectionSize(40);
  view_->setTextElideMode(Qt::ElideMiddle);
  clear();
}

void ComparisonDock::clear() {
  model_->clear();
  setNote(tr("File > Open for comparison: a second run (B), compared with the open one (A)."));
}

void ComparisonDock::setDiff(const analysis::RunDiff& d, const QStringList& a_inputs, const QStringList& b_inputs) {
  model_->setDiff(d, a_inputs, b_inputs);
  for (int c : {ComparisonModel::Rank, ComparisonModel::A, ComparisonModel::B, ComparisonModel::Change})
    view_->resizeColumnToContents(c);
  setNote(d.ranks.empty()
              ? tr("A and B have no rank in common: nothing to compare.")
              : tr("A: the open run; B: the run opened for comparison (their folders: hover the A and B headers). "
                   "Change: B − A. Click a header to sort."));
}

}  // namespace shardscope::viewer
