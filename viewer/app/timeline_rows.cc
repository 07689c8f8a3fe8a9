// The timeline's rows as the user arranges them (viewer/model/row_arrangement.h): where a row is on
// screen (pinned rows hold still above the scrolling ones), the label column (folds, the lane cap's "+N",
// its width), the scrollbar, the labels' context menu, and the arrangement saved and restored as text.
// The rest of TimelineWidget is in timeline_widget.cc.
#include <QContextMenuEvent>
#include <QMenu>
#include <QPainter>
#include <QScrollBar>

#include <memory>

#include "viewer/app/timeline_widget.h"

namespace shardscope::viewer {

int TimelineWidget::rowTop(int row) const {
  const Row& r = arrangement_.rows()[size_t(row)];
  return kRulerHeight + r.y - (size_t(row) < arrangement_.pinned_count() ? 0 : y_scroll_);
}

int TimelineWidget::rowAtPos(QPoint pos, int* lane) const {
  if (!layout_ || pos.y() < kRulerHeight) return -1;
  int y = pos.y() - kRulerHeight;
  // Pinned rows hold still above the scrolling ones.
  return arrangement_.row_at(y < arrangement_.pinned_height() ? y : y + y_scroll_, lane);
}

void TimelineWidget::setLabelWidth(int px) {
  int w = std::clamp(px, kMinLabelWidth, kMaxLabelWidth);
  if (w == label_width_) return;
  double span = vp_.ns_per_px * vp_.width_px;
  label_width_ = w;
  vp_.width_px = plotWidth();
  vp_.ns_per_px = span / vp_.width_px;
  changed();
}

void TimelineWidget::setRowFilter(const QString& text) {
  arrangement_.set_filter(text.toStdString());
  arranged(false);  // a filter is a look for now, not the run's arrangement
}

QString TimelineWidget::saveArrangement() const {
  RowArrangement a = arrangement_;
  a.label_width = label_width_ == kLabelWidth ? 0 : label_width_;
  return QString::fromStdString(a.save());
}

bool TimelineWidget::restoreArrangement(const QString& text) {
  if (!layout_ || !arrangement_.restore(text.toStdString())) return false;
  if (arrangement_.label_width > 0) setLabelWidth(arrangement_.label_width);
  arranged(false);
  return true;
}

void TimelineWidget::updateScrollBar() {
  int max_scroll = layout_ ? std::max(0, arrangement_.height() - (height() - kRulerHeight)) : 0;
  y_scroll_ = std::clamp(y_scroll_, 0, max_scroll);
  QSignalBlocker block(vbar_);
  vbar_->setRange(0, max_scroll);
  vbar_->setPageStep(std::max(1, height() - kRulerHeight - arrangement_.pinned_height()));
  vbar_->setSingleStep(layout_ ? layout_->options().lane_height * 2 : 20);
  vbar_->setValue(y_scroll_);
}

void TimelineWidget::arranged(bool user) {
  updateScrollBar();
  update();
  if (user) emit arrangementChanged();
}

void TimelineWidget::paintLabels(QPainter& p, size_t first, size_t last, int scroll, int clip_top) {
  const std::vector<Row>& rows = arrangement_.rows();
  const int lane_h = layout_->options().lane_height;
  p.save();
  p.setClipRect(QRect(0, clip_top, label_width_, height() - clip_top));
  QFont bold = font();
  bold.setBold(true);
  for (size_t i = first; i < last; ++i) {
    const Row& row = rows[i];
    int y = kRulerHeight + row.y - scroll;
    if (y + row.height < clip_top) continue;
    if (y > height()) break;
    const bool header = row.kind == RowKind::RankHeader || row.kind == RowKind::Group;
    p.setFont(row.kind == RowKind::RankHeader ? bold : font());
    p.setPen(header ? QColor(0x10, 0x20, 0x40) : QColor(0x30, 0x30, 0x30));
    if (row.kind == RowKind::RankHeader) p.fillRect(QRect(0, y, label_width_, row.height), QColor(0xD0, 0xD8, 0xE8));
    if (row.kind == RowKind::Group) p.fillRect(QRect(0, y, label_width_, row.height), QColor(0xE2, 0xE6, 0xEE));
    QString text = QString::fromStdString(row.label);
    // ▸ folded, ▾ open: the label is the fold's handle.
    if (header) text = QString::fromUtf8(arrangement_.collapsed(row) ? "▸ " : "▾ ") + text;
    int indent = row.kind == RowKind::RankHeader ? 4 : row.kind == RowKind::Group ? 10 : 20;
    int right = 4;
    if (has_lanes(row.kind) && row.folded > 0) {
      // The folded lane's count, on that lane: "+N" slices deeper than the cap are drawn there.
      QString badge = QStringLiteral("+%1").arg(row.folded);
      int w = QFontMetrics(font()).horizontalAdvance(badge) + 6;
      QRect r(label_width_ - w - 2, y + (row.lanes - 1) * lane_h, w, lane_h);
      p.fillRect(r, QColor(0xFF, 0xE0, 0xA0));
      p.drawText(r, Qt::AlignCenter, badge);
      right += w;
    }
    const int avail = std::max(0, label_width_ - indent - right);
    p.drawText(QRect(indent, y, avail, std::min(row.height, 20)), Qt::AlignVCenter | Qt::AlignLeft,
               QFontMetrics(p.font()).elidedText(text, Qt::ElideMiddle, avail));
  }
  p.restore();
  p.setFont(font());
}

QMenu* TimelineWidget::rowMenu(QPoint pos) {
  auto* menu = new QMenu(this);
  const int i = rowAtPos(pos);
  if (i >= 0) {
    const Row row = arrangement_.rows()[size_t(i)];  // a copy: each action re-arranges the rows
    const std::string key = arrangement_.key(arrangement_.rows()[size_t(i)]);
    auto find = [this, key]() -> const Row* {
      int r = arrangement_.find(key);
      return r >= 0 ? &arrangement_.rows()[size_t(r)] : nullptr;
    };
    if (is_leaf(row.kind)) {
      const bool pinned = arrangement_.pinned(arrangement_.rows()[size_t(i)]);
      menu->addAction(pinned ? tr("Unpin") : tr("Pin to top"), this,
                      [this, find, pinned] {
                        if (const Row* r = find()) arrangement_.set_pinned(*r, !pinned), arranged(true);
                      })
          ->setObjectName("pinRow");
      menu->addAction(tr("Hide row"), this,
                      [this, find] {
                        if (const Row* r = find()) arrangement_.hide(*r), arranged(true);
                      })
          ->setObjectName("hideRow");
    } else {
      const bool folded = arrangement_.collapsed(arrangement_.rows()[size_t(i)]);
      menu->addAction(folded ? tr("Expand") : tr("Collapse"), this,
                      [this, find] {
                        if (const Row* r = find()) arrangement_.toggle(*r), arranged(true);
                      })
          ->setObjectName("toggleGroup");
    }
  }
  const size_t hidden = arrangement_.hidden_count();
  QAction* show =
      menu->addAction(hidden == 1 ? tr("Show 1 hidden row") : tr("Show %1 hidden rows").arg(hidden), this, [this] {
        arrangement_.show_hidden();
        arranged(true);
      });
  show->setObjectName("showHidden");
  show->setEnabled(arrangement_.hidden_count() > 0);
  menu->addAction(tr("Reset row arrangement"), this,
                  [this] {
                    arrangement_.reset();
                    setLabelWidth(kLabelWidth);
                    arranged(true);
                  })
      ->setObjectName("resetRows");
  return menu;
}

void TimelineWidget::contextMenuEvent(QContextMenuEvent* e) {
  if (!layout_ || e->pos().x() >= label_width_) return;
  std::unique_ptr<QMenu> menu(rowMenu(e->pos()));
  menu->exec(e->globalPos());
}

}  // namespace shardscope::viewer
