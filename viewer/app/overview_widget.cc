#include "viewer/app/overview_widget.h"

#include <QMouseEvent>
#include <QPainter>

#include <algorithm>

#include "viewer/app/timeline_widget.h"

namespace shardscope::viewer {

namespace {
constexpr int kRowHeight = 5;  // per rank
constexpr int kMaxHeight = 48;
}  // namespace

OverviewWidget::OverviewWidget(TimelineWidget* timeline, QWidget* parent) : QWidget(parent), timeline_(timeline) {
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  setToolTip(tr("The whole run: darker where more of a rank's tracks are busy. Click or drag to move the view."));
  connect(timeline_, &TimelineWidget::viewportChanged, this, qOverload<>(&QWidget::update));
  hide();
}

void OverviewWidget::setTimeline(const TimelineLayout* layout) {
  layout_ = layout;
  overview_ = layout ? build_overview(*layout) : Overview{};
  setFixedHeight(sizeHint().height());
  setVisible(layout != nullptr);
  update();
}

QSize OverviewWidget::sizeHint() const {
  int ranks = int(overview_.density.size());
  return {400, std::clamp(ranks * kRowHeight, 2 * kRowHeight, kMaxHeight) + 4};
}

// The timeline's plot width: the strip ends where the timeline's rows do, left of its row scrollbar.
int OverviewWidget::stripWidth() const {
  return std::max(1, std::min(width() - timeline_->labelWidth(), timeline_->viewport().width_px));
}

void OverviewWidget::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), QColor(0xF0, 0xF0, 0xF0));
  if (!layout_ || overview_.density.empty()) return;
  p.setPen(QColor(0x44, 0x44, 0x44));
  p.drawText(QRect(4, 0, timeline_->labelWidth() - 8, height()), Qt::AlignVCenter | Qt::AlignLeft, tr("overview"));
  const int w = stripWidth(), x0 = timeline_->labelWidth();
  const int rows = int(overview_.density.size());
  const double row_h = double(height() - 4) / rows;
  // Per pixel column the densest bin it covers, as the alpha of one colour (the timeline's host grey would
  // vanish on the background): one fillRect per non-empty pixel and rank.
  for (int r = 0; r < rows; ++r) {
    const std::vector<float>& d = overview_.density[size_t(r)];
    for (int x = 0; x < w; ++x) {
      size_t b0 = size_t(int64_t(x) * overview_.bins / w),
             b1 = std::max(b0 + 1, size_t(int64_t(x + 1) * overview_.bins / w));
      float v = 0;
      for (size_t b = b0; b < b1 && b < d.size(); ++b) v = std::max(v, d[b]);
      if (v <= 0) continue;
      p.fillRect(QRectF(x0 + x, 2 + r * row_h, 1, std::max(1.0, row_h - (rows > 4 ? 0.0 : 1.0))),
                 QColor(0x10, 0x30, 0x70, int(40 + 215 * v)));
    }
  }
  auto [a, b] = overview_window(overview_, timeline_->viewport(), w);
  a = std::clamp(a, 0.0, double(w)), b = std::clamp(b, a + 2, double(w) + 1);
  p.setPen(QPen(QColor(0xCC, 0x00, 0x00), 2));
  p.setBrush(QColor(0xCC, 0x00, 0x00, 30));
  p.drawRect(QRectF(x0 + a, 1, b - a, height() - 2));
}

void OverviewWidget::centreAt(double x) {
  if (!layout_) return;
  Viewport vp = timeline_->viewport();
  vp.start_ns = overview_start_at(overview_, vp, x - timeline_->labelWidth(), stripWidth());
  timeline_->setViewport(vp);
}

void OverviewWidget::mousePressEvent(QMouseEvent* e) { centreAt(e->position().x()); }
void OverviewWidget::mouseMoveEvent(QMouseEvent* e) {
  if (e->buttons() & Qt::LeftButton) centreAt(e->position().x());
}

}  // namespace shardscope::viewer
