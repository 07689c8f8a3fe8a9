// Loading a run for the viewer: the same pipeline as `shardscope report` (analysis::analyse_run), with
// keep_going so a file that fails is reported while the others open. Async for the window (a worker thread,
// results delivered on the GUI thread, cancellable), sync for --screenshot.
#pragma once

#include <QObject>
#include <QStringList>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "analyzer/analysis/run.h"
#include "viewer/model/ranks_overview.h"

namespace shardscope::viewer {

struct LoadOutcome {
  std::shared_ptr<analysis::AnalysedRun> run;  // null when nothing loaded
  // Set instead of `run` when the inputs hold rank summaries: the Ranks overview, no events loaded.
  std::shared_ptr<RanksOverview> overview;
  std::string error;       // why nothing loaded
  bool cancelled = false;  // the user stopped it: nothing to say, nothing to show
};

LoadOutcome load_run(const QStringList& paths, std::function<void(const plugins::LoadProgress&)> on_progress = {},
                     const std::atomic<bool>* cancel = nullptr);

class Loader : public QObject {
  Q_OBJECT
 public:
  explicit Loader(QObject* parent = nullptr) : QObject(parent) {}
  ~Loader() override;  // cancels a load under way and waits for its thread
  bool busy() const { return busy_; }
  // Starts loading on a worker thread; started(), progress() and finished() arrive on this object's thread.
  void start(const QStringList& paths);
  // Asks the worker to stop: the file being parsed stops at its next report (a few MB), finished() follows
  // with an outcome marked cancelled. Nothing when idle.
  void cancel() { cancel_ = true; }
  // Called on the worker thread with each report before it is posted. Tests hold the worker there, so that
  // what they check happens while a file is being read, whatever the machine's speed.
  void setWorkerHook(std::function<void(const plugins::LoadProgress&)> hook) { worker_hook_ = std::move(hook); }

 signals:
  void started();
  void progress(const shardscope::plugins::LoadProgress& p);
  void finished(QStringList paths);

 public:
  LoadOutcome take() { return std::move(outcome_); }

 private:
  std::thread worker_;
  LoadOutcome outcome_;
  bool busy_ = false;
  std::atomic<bool> cancel_{false};
  std::function<void(const plugins::LoadProgress&)> worker_hook_;
};

}  // namespace shardscope::viewer
