// The Legend dock: a swatch and a name for every colour the timeline draws (viewer/model/palette.h).
#pragma once

#include <QDockWidget>

namespace shardscope::viewer {

class LegendWidget : public QWidget {
  Q_OBJECT
 public:
  explicit LegendWidget(QWidget* parent = nullptr);
  QSize sizeHint() const override;

 protected:
  void paintEvent(QPaintEvent*) override;
};

class LegendDock : public QDockWidget {
  Q_OBJECT
 public:
  explicit LegendDock(QWidget* parent = nullptr);
};

}  // namespace shardscope::viewer
