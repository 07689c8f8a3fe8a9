// The timeline's rows as the user arranges them (viewer/model/row_arrangement.h): the label column's width,
// the row filter, the scrollbar, the labels' context menu, and the arrangement saved and restored as text.
// The rest of TimelineWidget is in timeline_widget.cc; where rows are on screen, in timeline_frame.cc.
#include <QContextMenuEvent>
#include <QMenu>
#include <QScrollBar>

#include <memory>

#include "viewer/app/timeline_widget.h"

namespace shardscope::viewer {

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
