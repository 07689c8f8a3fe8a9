#include "viewer/app/docks/legend_dock.h"

#include <QPainter>

#include <algorithm>

#include "viewer/model/palette.h"

namespace shardscope::viewer {

namespace {
constexpr int kSwatch = 14, kRow = 18, kMargin = 6;
}

LegendWidget::LegendWidget(QWidget* parent) : QWidget(parent) {
  setObjectName("legend");
  // Never squeezed below its entries by the docks stacked beside it: a cut legend hides colours.
  setMinimumHeight(sizeHint().height());
}

QSize LegendWidget::sizeHint() const {
  // Two columns of entries: the dock stays short beside the Event dock.
  int rows = int((legend().size() + 1) / 2);
  int name_w = 0;
  for (const LegendEntry& e : legend())
    name_w = std::max(name_w, fontMetrics().horizontalAdvance(QString::fromUtf8(e.name)));
  return {2 * (kSwatch + 6 + name_w + kMargin) + kMargin, rows * kRow + 2 * kMargin};
}

void LegendWidget::paintEvent(QPaintEvent*) {
  QPainter p(this);
  const auto& entries = legend();
  int rows = int((entries.size() + 1) / 2);
  int col_w = (width() - kMargin) / 2;
  for (size_t i = 0; i < entries.size(); ++i) {
    int col = int(i) / rows, row = int(i) % rows;
    int x = kMargin + col * col_w, y = kMargin + row * kRow;
    p.fillRect(QRect(x, y + (kRow - kSwatch) / 2, kSwatch, kSwatch),
               QColor::fromRgb(QRgb(0xFF000000u | entries[i].colour)));
    p.setPen(palette().color(QPalette::WindowText));
    p.drawText(QRect(x + kSwatch + 6, y, col_w - kSwatch - 8, kRow), Qt::AlignVCenter | Qt::AlignLeft,
               fontMetrics().elidedText(QString::fromUtf8(entries[i].name), Qt::ElideRight, col_w - kSwatch - 8));
  }
}

LegendDock::LegendDock(QWidget* parent) : QDockWidget(tr("Legend"), parent) {
  setObjectName("Legend");
  setWidget(new LegendWidget(this));
}

}  // namespace shardscope::viewer
