#include "viewer/app/loader.h"

#include <QMetaObject>
#include <QPointer>

#include <exception>

namespace shardscope::viewer {

LoadOutcome load_run(const QStringList& paths, std::function<void(const plugins::LoadProgress&)> on_progress) {
  std::vector<std::string> args;
  for (const QString& p : paths) args.push_back(p.toStdString());
  plugins::LoadOptions options;
  options.keep_going = true;
  options.keep_args = true;  // the details panel lists the selected event's args
  options.on_progress = std::move(on_progress);
  LoadOutcome out;
  try {
    out.run = std::make_shared<analysis::AnalysedRun>(analysis::analyse_run(args, options));
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  return out;
}

Loader::~Loader() {
  if (worker_.joinable()) worker_.join();
}

void Loader::start(const QStringList& paths) {
  if (busy_) return;
  if (worker_.joinable()) worker_.join();
  busy_ = true;
  worker_ = std::thread([this, paths] {
    LoadOutcome o = load_run(paths, [this](const plugins::LoadProgress& p) {
      QMetaObject::invokeMethod(
          this, [this, p] { emit progress(qint64(p.bytes_done), qint64(p.bytes), int(p.files_done), int(p.files)); },
          Qt::QueuedConnection);
    });
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
