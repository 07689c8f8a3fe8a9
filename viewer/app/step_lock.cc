#include "viewer/app/step_lock.h"

#include <utility>

#include "viewer/app/timeline_widget.h"
#include "viewer/model/step_offset.h"

namespace shardscope::viewer {

namespace {
// The first rank's steps: the row a user reads the step at.
const std::vector<model::Step>* steps_of(const TimelineWidget* t) {
  const TimelineLayout* l = t->timelineLayout();
  if (!l || l->ranks().empty()) return nullptr;
  return &l->ranks()[0].rank->steps;
}

// `to` shows what `from` shows, at its zoom, shifted by the step at from's left edge (step_offset.h).
void place(const TimelineWidget* from, TimelineWidget* to) {
  const std::vector<model::Step>* sf = steps_of(from);
  const std::vector<model::Step>* st = steps_of(to);
  if (!sf || !st) return;
  to->setViewport(locked_view(from->viewport(), *sf, *st, from->timelineLayout()->start_ns(),
                              to->timelineLayout()->start_ns(), to->viewport().width_px));
}
}  // namespace

StepLock::StepLock(TimelineWidget* a, TimelineWidget* b, QObject* parent) : QObject(parent), a_(a), b_(b) {
  connect(a_, &TimelineWidget::viewportChanged, this, &StepLock::follow);
  connect(b_, &TimelineWidget::viewportChanged, this, &StepLock::lead);
  connect(b_, &TimelineWidget::viewportResized, this, [this] { b_resized_ = true; });
  // B shows A's steps where A shows them, past B's own ends if need be; A stays held to its run.
  b_->setHeldToRun(false);
}

void StepLock::follow() {
  if (!enabled_ || syncing_) return;
  syncing_ = true;
  place(a_, b_);
  syncing_ = false;
}

void StepLock::lead() {
  const bool resized = std::exchange(b_resized_, false);
  if (!enabled_ || syncing_) return;
  // B's dock shown (its tab raised) or resized: no one moved B, so B takes A's view and A stays.
  if (resized) return follow();
  syncing_ = true;
  place(b_, a_);
  place(a_, b_);  // A may have stopped at its trace's ends: B follows where A is
  syncing_ = false;
}

}  // namespace shardscope::viewer
