#include "viewer/app/memory_chart_widget.h"

#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>

#include "analyzer/report/memory_render.h"
#include "viewer/model/palette.h"

namespace shardscope::viewer {

namespace {
constexpr int kBar = 7, kCategory = 2 * kBar + 6, kRankHeader = 20, kNameWidth = 140, kMinBar = 40;
const QColor kMeasured = QColor::fromRgb(QRgb(0xFF000000u | kAllGather));  // blue
const QColor kPredicted = QColor::fromRgb(QRgb(0xFF000000u | kCompute));   // orange

QString mb(std::optional<double> v) { return v ? QString::number(*v / 1e6, 'f', 3) : QStringLiteral("n/a"); }

// The ZeRO model's assumptions for a rank, one per line: how the states were predicted, the inputs the
// strategy was inferred from or given, how the activations were predicted.
QString assumptions(const metrics::RankMemory& m) {
  QStringList lines;
  for (const std::string& s : {report::states_model(m), report::inputs_line(m), report::activations_model(m)})
    if (!s.empty()) lines << QString::fromStdString(s);
  return lines.join('\n');
}
}  // namespace

MemoryChartWidget::MemoryChartWidget(QWidget* parent) : QWidget(parent) { setMinimumHeight(80); }

QString MemoryChartWidget::valueText(const MemoryBar& b) {
  QString text = mb(b.measured) + " / " + mb(b.predicted);
  if (b.departure)
    text += QStringLiteral(" (%1%2 %)")
                .arg(*b.departure >= 0 ? QStringLiteral("+") : QString())
                .arg(100 * *b.departure, 0, 'f', 1);
  return text;
}

void MemoryChartWidget::setChart(MemoryChart chart) {
  chart_ = std::move(chart);
  // The value column fits its longest text, and the widget fits the column: the scroll area scrolls
  // rather than cut "(-35.0 %)" at "(-35".
  const QFontMetrics fm(font());
  value_width_ = 170;
  for (const MemoryRankChart& r : chart_.ranks)
    for (const MemoryBar& b : r.bars) value_width_ = std::max(value_width_, fm.horizontalAdvance(valueText(b)) + 8);
  setMinimumWidth(kNameWidth + kMinBar + 6 + value_width_);
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

QSize MemoryChartWidget::sizeHint() const { return {std::max(520, minimumWidth()), std::max(80, contentHeight())}; }

QString MemoryChartWidget::toolTipAt(QPoint pos) const {
  int y = 2 + kRankHeader;
  for (const MemoryRankChart& r : chart_.ranks) {
    const int h = kRankHeader + int(r.bars.size()) * kCategory + (r.bars.empty() ? kRankHeader : 0);
    if (pos.y() >= y && pos.y() < y + h) return r.memory ? assumptions(*r.memory) : QString();
    y += h;
  }
  return {};
}

bool MemoryChartWidget::event(QEvent* e) {
  if (e->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(e);
    const QString tip = toolTipAt(help->pos());
    if (tip.isEmpty()) QToolTip::hideText();
    else
      QToolTip::showText(help->globalPos(), tip, this);
    return true;
  }
  return QWidget::event(e);
}

void MemoryChartWidget::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  p.setPen(palette().text().color());
  if (chart_.ranks.empty()) {
    p.drawText(rect(), Qt::AlignCenter, tr("Open a run to compare its memory with the ZeRO model."));
    return;
  }
  const int bar_x = kNameWidth, bar_w = std::max(kMinBar, width() - kNameWidth - value_width_ - 6);
  int y = 2;
  // Legend.
  p.fillRect(QRect(4, y + 4, 12, kBar), kMeasured);
  p.drawText(QRect(20, y, 140, 16), Qt::AlignVCenter, tr("measured peak"));
  p.fillRect(QRect(150, y + 4, 12, kBar), kPredicted);
  p.drawText(QRect(166, y, width() - 170, 16), Qt::AlignVCenter,
             tr("predicted (ZeRO model), MB; hover a rank for the model's assumptions"));
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
      p.setPen(palette().text().color());
      p.drawText(QRect(bar_x + bar_w + 6, y, value_width_, kCategory), Qt::AlignVCenter, valueText(b));
      y += kCategory;
    }
  }
}

}  // namespace shardscope::viewer
