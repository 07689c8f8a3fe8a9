#include "viewer/app/live_follow.h"

#include <QStatusBar>

#include "viewer/app/main_window.h"
#include "viewer/app/timeline_widget.h"

namespace shardscope::viewer {

LiveFollow::LiveFollow(MainWindow* window, const QString& dir, int interval_ms)
    : QObject(window), window_(window), dir_(dir), live_(dir.toStdString()) {
  connect(&timer_, &QTimer::timeout, this, &LiveFollow::poll);
  // After MainWindow's own handler (connected first), which has shown the run by then.
  connect(window_->loader(), &Loader::finished, this, &LiveFollow::reopened);
  connect(window_->timeline(), &TimelineWidget::viewportChanged, this, &LiveFollow::viewMoved);
  timer_.start(interval_ms);
  window_->statusBar()->showMessage(tr("Following %1: waiting for the first step every rank finishes").arg(dir_));
}

void LiveFollow::poll() {
  size_t landed = 0;
  try {
    landed = live_.poll();
  } catch (const std::exception& e) {
    timer_.stop();
    window_->statusBar()->showMessage(tr("Stopped following %1: %2").arg(dir_, QString::fromUtf8(e.what())));
    return;
  }
  if (live_.done()) timer_.stop();
  if (landed == 0) return;
  const analysis::FollowedStep& s = live_.steps().back();
  int64_t slowest = 0;
  for (const auto& r : s.ranks) slowest = std::max(slowest, r.m.window_ns);
  window_->statusBar()->showMessage(tr("Following %1: %2 step(s); step %3 took %4 ms; straggler so far: %5%6")
                                        .arg(dir_)
                                        .arg(live_.steps().size())
                                        .arg(s.number)
                                        .arg(double(slowest) / 1e6, 0, 'f', 3)
                                        .arg(live_.straggler() >= 0 ? tr("rank %1").arg(live_.straggler()) : tr("none"))
                                        .arg(live_.done() ? tr(" (the job's files are complete)") : QString()));
  emit stepsLanded(int(landed));
  reopen();
}

void LiveFollow::reopen() {
  if (window_->loading()) {
    pending_ = true;
    return;
  }
  before_ = window_->timeline()->viewport();
  window_->openAsync({dir_});
}

void LiveFollow::reopened() {
  if (pending_) {
    pending_ = false;
    return reopen();
  }
  const analysis::AnalysedRun* run = window_->run();
  if (!run || !live_.newest()) return;
  if (!live_.following()) {
    ours_ = true;
    window_->timeline()->setViewport(before_);  // the user went back: the reopened run stays where they were
    ours_ = false;
    return;
  }
  // The newest step on the rank that took longest over it: the view the user follows.
  for (uint32_t i = 0; i < run->trace.ranks.size(); ++i)
    for (const model::Step& st : run->trace.ranks[i].steps)
      if (st.number == *live_.newest()) {
        ours_ = true;
        window_->timeline()->zoomTo(st.start_ns, st.end_ns, i, 0);
        ours_ = false;
        return;
      }
}

// The user moved the view: back from the newest step stops following, onto it again follows.
void LiveFollow::viewMoved() {
  const analysis::AnalysedRun* run = window_->run();
  if (ours_ || !run || !live_.newest() || run->trace.ranks.empty()) return;
  const double end = window_->timeline()->viewport().end_ns();
  for (const model::Step& st : run->trace.ranks[0].steps)
    if (st.number == *live_.newest()) {
      if (end >= double(st.start_ns)) live_.follow_newest();
      else
        live_.show_step(st.number - 1);
      return;
    }
}

}  // namespace shardscope::viewer
