// Run B's timeline locked to run A's by step: B shows what A shows at A's zoom, shifted so that the step at
// A's left edge starts at the same x in B (step k of A over step k of B, first ranks' steps). Panning or
// zooming B moves A the same way (and so B); B's dock shown or resized moves B alone. While `setEnabled(false)`, changes to either are not followed
// (a run being swapped in).
#pragma once

#include <QObject>

namespace shardscope::viewer {

class TimelineWidget;

class StepLock : public QObject {
  Q_OBJECT
 public:
  StepLock(TimelineWidget* a, TimelineWidget* b, QObject* parent = nullptr);
  void setEnabled(bool on) { enabled_ = on; }
  // B to A's view now (after B's run is loaded).
  void follow();

 private:
  void lead();  // A to B's view, after the user moved B
  TimelineWidget *a_, *b_;
  bool enabled_ = true, syncing_ = false;
  bool b_resized_ = false;  // B's next viewportChanged comes from its resize, not from the user
};

}  // namespace shardscope::viewer
