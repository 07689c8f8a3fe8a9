#include "viewer/app/memory_chart_widget.h"

#include <QPainter>

#include "analyzer/report/memory_render.h"
#include "viewer/model/palette.h"

namespace shardscope::viewer {

namespace {
constexpr int kBar = 7, kCategory = 2 * kBar + 6, kRankHeader = 20, kNameWidth = 140, kValueWidth = 170;
const QColor kMeasured = QColor::fromRgb(QRgb(0xFF000000u | kAllGather));  // blue
const QColor kPredicted = QColor::fromRgb(QRgb(0xFF000000u | kCompute));   // orange

QString mb(std::optional<double> v) { return v ? QString::number(*v / 1e6, 'f', 3) : QStringLiteral("n/a"); }
}  // namespace

MemoryChartWidget::MemoryChartWidget(QWidget* parent) : QWidget(parent) { setMinimumHeight(80); }

void MemoryChartWidget::setChart(MemoryChart chart) {
  chart_ = std::move(chart);
  setMinimumHeight(std::max(80, contentHeight()));
  updateGeometry();
  update();
}

int MemoryChartWidget::contentHeight() const {
  int h = kRankHeader;  // the legend
  for (const MemoryRankChart& r : chart_.ranks)
    h += kRankHeader + int(r.bars.size()) * kCategory + (r.bars.empty() ? kRankHeader : 0);
  return h;
}

QSize MemoryChartWidget::sizeHint() const { return {520, std::max(80, contentHeight())}; }

void MemoryChartWidget::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  p.setPen(palette().text().color());
  if (chart_.ranks.empty()) {
    p.drawText(rect(), Qt::AlignCenter, tr("Open a run to compare its memory with the ZeRO model."));
    return;
  }
  const int bar_x = kNameWidth, bar_w = std::max(40, width() - kNameWidth - kValueWidth - 8);
  int y = 2;
  // Legend.
  p.fillRect(QRect(4, y + 4, 12, kBar), kMeasured);
  p.drawText(QRect(20, y, 140, 16), Qt::AlignVCenter, tr("measured peak"));
  p.fillRect(QRect(150, y + 4, 12, kBar), kPredicted);
  p.drawText(QRect(166, y, 200, 16), Qt::AlignVCenter, tr("predicted (ZeRO model), MB"));
  y += kRankHeader;
  const double scale = chart_.scale_bytes > 0 ? bar_w / chart_.scale_bytes : 0;
  for (const MemoryRankChart& r : chart_.ranks) {
    QFont bold = font();
    bold.setBold(true);
    p.setFont(bold);
    p.drawText(QRect(4, y, width() - 8, kRankHeader), Qt::AlignVCenter, tr("rank %1").arg(r.rank));
    p.setFont(font());
    y += kRankHeader;
    if (r.bars.empty()) {
      QString why = QString::fromStdString(report::memory_not_applicable(*r.memory));
      p.drawText(QRect(12, y, width() - 16, kRankHeader), Qt::AlignVCenter,
                 why.isEmpty() ? tr("no memory counters") : why);
      y += kRankHeader;
      continue;
    }
    for (const MemoryBar& b : r.bars) {
      p.setPen(palette().text().color());
      p.drawText(QRect(12, y, kNameWidth - 14, kCategory), Qt::AlignVCenter, QString::fromStdString(b.category));
      // A bar past the scale (a category the model does not predict) is clipped and ends in a notch.
      auto bar = [&](std::optional<double> v, int dy, const QColor& c) {
        if (!v) return;
        double len = *v * scale;
        p.fillRect(QRectF(bar_x, y + dy, std::min(len, double(bar_w)), kBar), c);
        if (len > bar_w) p.fillRect(QRectF(bar_x + bar_w - 6, y + dy, 2, kBar), palette().base());
      };
      bar(b.measured, 2, kMeasured);
      bar(b.predicted, 2 + kBar + 1, kPredicted);
      QString text = mb(b.measured) + " / " + mb(b.predicted);
      if (b.departure)
        text += QStringLiteral(" (%1%2 %)")
                    .arg(*b.departure >= 0 ? QStringLiteral("+") : QString())
                    .arg(100 * *b.departure, 0, 'f', 1);
      p.setPen(palette().text().color());
      p.drawText(QRect(bar_x + bar_w + 6, y, kValueWidth, kCategory), Qt::AlignVCenter, text);
      y += kCategory;
    }
  }
}

}  // namespace shardscope::viewer
