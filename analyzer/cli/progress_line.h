// "ingesting: 3/8 files, 412.0 of 1024.0 MB, 180.2 MB/s, 3 s left" on stderr, redrawn in place once a load
// has taken a second (SHARDSCOPE_PROGRESS_AFTER_MS overrides it; tests set 0); on a terminal only, so logs
// and pipes stay clean, and never after set_progress_quiet(true) (--quiet). Any command that loads traces
// passes callback() as the loader's LoadOptions::on_progress.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "plugins/load/load.h"

namespace shardscope::cli {

// The line's text for a load `elapsed_s` seconds in (sizes on disk). The rate and the time left appear once
// a file is done: the loader reports whole files.
std::string progress_text(const plugins::LoadProgress& p, double elapsed_s);

// --quiet: no progress line from here on, terminal or not.
void set_progress_quiet(bool quiet);

class ProgressLine {
 public:
  ProgressLine();   // draws nothing unless stderr is a terminal and not quiet
  ~ProgressLine();  // erases the line
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  // The callback for LoadOptions::on_progress; empty when nothing is to be drawn. Valid while this lives.
  std::function<void(const plugins::LoadProgress&)> callback();

 private:
  void run();
  void draw();
  bool on_ = false;
  std::mutex mu_;
  std::condition_variable cv_;
  plugins::LoadProgress state_;
  std::chrono::steady_clock::time_point start_;
  bool done_ = false, drawn_ = false;
  std::thread thread_;
};

}  // namespace shardscope::cli
