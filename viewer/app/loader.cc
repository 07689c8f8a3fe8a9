#include "viewer/app/loader.h"

#include <QMetaObject>

#include <exception>

namespace shardscope::viewer {

LoadOutcome load_run(const QStringList& paths, std::function<void(const plugins::LoadProgress&)> on_progress,
                     const std::atomic<bool>* cancel) {
  std::vector<std::string> args;
  for (const QString& p : paths) args.push_back(p.toStdString());
  plugins::LoadOptions options;
  options.keep_going = true;
  options.keep_args = true;  // the details panel lists the selected event's args
  options.on_progress = std::move(on_progress);
  options.cancel = cancel;
  LoadOutcome out;
  try {
    // Summaries among the inputs: the run is opened from them (ranks_overview.h), its events left on disk.
    if (std::optional<SummaryInputs> summaries = find_summaries({args.begin(), args.end()}))
      out.overview = std::make_shared<RanksOverview>(open_overview(*summaries, options));
    else
      out.run = std::make_shared<analysis::AnalysedRun>(analysis::analyse_run(args, options));
  } catch (const plugins::Cancelled& e) {
    out.cancelled = true;
    out.error = e.what();
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  // Cancelled during the analysis, after the files were read: dropped all the same.
  if (cancel && *cancel && (out.run || out.overview)) {
    out.run.reset();
    out.overview.reset();
    out.cancelled = true;
    out.error = plugins::Cancelled().what();
  }
  return out;
}

Loader::~Loader() {
  cancel_ = true;  // a window closed mid-load does not wait for the whole run to parse
  if (worker_.joinable()) worker_.join();
}

void Loader::start(const QStringList& paths) {
  if (busy_) return;
  if (worker_.joinable()) worker_.join();
  busy_ = true;
  cancel_ = false;
  emit started();
  worker_ = std::thread([this, paths, hook = worker_hook_] {
    LoadOutcome o = load_run(
        paths,
        [this, &hook](const plugins::LoadProgress& p) {
          QMetaObject::invokeMethod(
              this, [this, p] { emit progress(p); }, Qt::QueuedConnection);
          if (hook) hook(p);
        },
        &cancel_);
    QMetaObject::invokeMethod(
        this,
        [this, paths, o = std::move(o)]() mutable {
          outcome_ = std::move(o);
          busy_ = false;
          emit finished(paths);
        },
        Qt::QueuedConnection);
  });
}

}  // namespace shardscope::viewer
