// Loading a run for the viewer: the same pipeline as `shardscope report` (analysis::analyse_run), with
// keep_going so a file that fails is reported while the others open. Async for the window (a worker thread,
// results delivered on the GUI thread), sync for --screenshot.
#pragma once

#include <QObject>
#include <QStringList>

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "analyzer/analysis/run.h"

namespace shardscope::viewer {

struct LoadOutcome {
  std::shared_ptr<analysis::AnalysedRun> run;  // null when nothing loaded
  std::string error;                           // why nothing loaded
};

LoadOutcome load_run(const QStringList& paths, std::function<void(const plugins::LoadProgress&)> on_progress = {});

class Loader : public QObject {
  Q_OBJECT
 public:
  explicit Loader(QObject* parent = nullptr) : QObject(parent) {}
  ~Loader() override;
  bool busy() const { return busy_; }
  // Starts loading on a worker thread; progress() and finished() arrive on this object's thread.
  void start(const QStringList& paths);

 signals:
  void progress(qint64 bytes_done, qint64 bytes, int files_done, int files);
  void finished(QStringList paths);

 public:
  LoadOutcome take() { return std::move(outcome_); }

 private:
  std::thread worker_;
  LoadOutcome outcome_;
  bool busy_ = false;
};

}  // namespace shardscope::viewer
