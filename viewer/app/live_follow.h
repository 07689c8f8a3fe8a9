// `shardscope-viewer --follow DIR`: a running job's trace folder, looked at every half second
// (model/live_steps.h); when steps land, the run is opened again (the loader reads each file up to its last
// whole record), so the steps, the docks and the straggler take them in, and the view goes to the newest
// step unless the user has moved it back to an earlier one. The status bar says what landed.
#pragma once

#include <QObject>
#include <QString>
#include <QTimer>

#include "viewer/model/live_steps.h"
#include "viewer/model/viewport.h"

namespace shardscope::viewer {

class MainWindow;

class LiveFollow : public QObject {
  Q_OBJECT
 public:
  LiveFollow(MainWindow* window, const QString& dir, int interval_ms = 500);
  const LiveSteps& steps() const { return live_; }
  // One look at the files (the timer's; a test may call it).
  void poll();

 signals:
  void stepsLanded(int count);

 private:
  void reopen();
  void reopened();
  void viewMoved();
  MainWindow* window_;
  QString dir_;
  LiveSteps live_;
  QTimer timer_;
  bool pending_ = false;  // steps landed while a load was under way: open again when it ends
  bool ours_ = false;     // the view is being moved by us, not the user
  Viewport before_;       // the user's view before a reopen, given back when not following
};

}  // namespace shardscope::viewer
