#include "analyzer/cli/progress_line.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>

#include <fmt/format.h>

namespace shardscope::cli {
namespace {

std::chrono::milliseconds progress_after() {
  if (const char* env = std::getenv("SHARDSCOPE_PROGRESS_AFTER_MS"); env && *env) {
    char* end = nullptr;
    long ms = std::strtol(env, &end, 10);
    if (end && *end == '\0' && ms >= 0) return std::chrono::milliseconds(ms);
  }
  return std::chrono::seconds(1);
}

}  // namespace

ProgressLine::ProgressLine() : on_(isatty(STDERR_FILENO)) {}

ProgressLine::~ProgressLine() {
  {
    std::lock_guard lock(mu_);
    done_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (drawn_) fmt::print(stderr, "\r\033[K");
}

std::function<void(const plugins::LoadProgress&)> ProgressLine::callback() {
  if (!on_) return {};
  return [this](const plugins::LoadProgress& p) {
    std::lock_guard lock(mu_);
    state_ = p;
    // The first call starts the clock: the line shows only once the load has taken its threshold.
    if (!thread_.joinable() && !done_) thread_ = std::thread([this] { run(); });
  };
}

void ProgressLine::run() {
  const auto start = std::chrono::steady_clock::now();
  const auto after = progress_after();
  std::unique_lock lock(mu_);
  if (after.count() == 0) draw();  // at once, however quick the load
  while (!cv_.wait_for(lock, std::chrono::milliseconds(200), [this] { return done_; })) {
    if (std::chrono::steady_clock::now() - start < after) continue;
    draw();
  }
}

void ProgressLine::draw() {
  fmt::print(stderr, "\r\033[Kingesting: {}/{} files, {:.1f} of {:.1f} MB (on disk)", state_.files_done, state_.files, state_.bytes_done / 1e6,
             state_.bytes / 1e6);
  drawn_ = true;
}

}  // namespace shardscope::cli
