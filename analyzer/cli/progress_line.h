// "ingesting: 3/8 files, 412.0 of 1024.0 MB (on disk)" on stderr, redrawn in place once a load has taken
// a second (SHARDSCOPE_PROGRESS_AFTER_MS overrides it; tests set 0); on a terminal only, so logs and pipes
// stay clean. It listens to the loader's progress callback.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "plugins/load/load.h"

namespace shardscope::cli {

class ProgressLine {
 public:
  ProgressLine();  // draws nothing unless stderr is a terminal
  ~ProgressLine();  // erases the line
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  // The callback for LoadOptions::on_progress; valid while this object lives.
  std::function<void(const plugins::LoadProgress&)> callback();

 private:
  void run();
  void draw();
  bool on_ = false;
  std::mutex mu_;
  std::condition_variable cv_;
  plugins::LoadProgress state_;
  bool done_ = false, drawn_ = false;
  std::thread thread_;
};

}  // namespace shardscope::cli
