#include "viewer/app/step_lock.h"

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

// `to` shows what `from` shows, at its zoom, shifted by the step at from's left edge.
void place(const TimelineWidget* from, TimelineWidget* to) {
  const std::vector<model::Step>* sf = steps_of(from);
  const std::vector<model::Step>* st = steps_of(to);
  if (!sf || !st) return;
  Viewport v = from->viewport();
  // Without steps on either side the two runs' starts line up.
  std::optional<int64_t> off = step_offset(*sf, *st, v.start_ns);
  v.start_ns += off ? double(*off) : double(to->timelineLayout()->start_ns() - from->timelineLayout()->start_ns());
  to->setViewport(v);
}
}  // namespace

StepLock::StepLock(TimelineWidget* a, TimelineWidget* b, QObject* parent) : QObject(parent), a_(a), b_(b) {
  connect(a_, &TimelineWidget::viewportChanged, this, &StepLock::follow);
  connect(b_, &TimelineWidget::viewportChanged, this, &StepLock::lead);
}

void StepLock::follow() {
  if (!enabled_ || syncing_) return;
  syncing_ = true;
  place(a_, b_);
  syncing_ = false;
}

void StepLock::lead() {
  if (!enabled_ || syncing_) return;
  syncing_ = true;
  place(b_, a_);
  place(a_, b_);  // A may have stopped at its trace's ends: B follows where A is
  syncing_ = false;
}

}  // namespace shardscope::viewer
