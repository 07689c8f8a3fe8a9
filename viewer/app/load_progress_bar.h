// The window's progress area while a run loads: what is being read ("reading rank3.json.gz — 412 / 980 MB,
// 2.1 M events"), a bar over the whole load, and Cancel. Watches one loader or several (the run, the run to
// compare with); hidden when none is busy.
#pragma once

#include <QWidget>

#include <vector>

#include "viewer/app/loader.h"

class QLabel;
class QProgressBar;
class QPushButton;

namespace shardscope::viewer {

class LoadProgressBar : public QWidget {
  Q_OBJECT
 public:
  explicit LoadProgressBar(QWidget* parent = nullptr);
  void watch(Loader* loader);
  QLabel* label() const { return label_; }
  QPushButton* cancelButton() const { return cancel_; }

 private:
  void update(const plugins::LoadProgress& p);
  void loaderFinished();

  QLabel* label_ = nullptr;
  QProgressBar* bar_ = nullptr;
  QPushButton* cancel_ = nullptr;
  std::vector<Loader*> loaders_;
};

}  // namespace shardscope::viewer
