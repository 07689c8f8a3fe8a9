#include "analyzer/cli/progress_line.h"

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace shardscope::cli {
namespace {

std::atomic<bool> quiet{false};

std::chrono::milliseconds progress_after() {
  if (const char* env = std::getenv("SHARDSCOPE_PROGRESS_AFTER_MS"); env && *env) {
    char* end = nullptr;
    long ms = std::strtol(env, &end, 10);
    if (end && *end == '\0' && ms >= 0) return std::chrono::milliseconds(ms);
  }
  return std::chrono::seconds(1);
}

// "under 1 s", "42 s", "3 min 20 s", "2 h 5 min".
std::string seconds_text(double s) {
  if (s < 1) return "under 1 s";
  const int64_t n = int64_t(std::llround(s));
  if (n < 60) return fmt::format("{} s", n);
  if (n < 3600) return fmt::format("{} min {} s", n / 60, n % 60);
  return fmt::format("{} h {} min", n / 3600, n % 3600 / 60);
}

}  // namespace

std::string progress_text(const plugins::LoadProgress& p, double elapsed_s) {
  std::string s = fmt::format("ingesting: {}/{} files, {:.1f} of {:.1f} MB", p.files_done, p.files, p.bytes_done / 1e6,
                              p.bytes / 1e6);
  if (p.bytes_done == 0 || elapsed_s <= 0) return s + fmt::format(", {} so far", seconds_text(elapsed_s));
  const double rate = double(p.bytes_done) / elapsed_s;  // bytes per second
  s += fmt::format(", {:.1f} MB/s", rate / 1e6);
  if (p.bytes > p.bytes_done) s += fmt::format(", {} left", seconds_text(double(p.bytes - p.bytes_done) / rate));
  return s;
}

void set_progress_quiet(bool q) { quiet = q; }

ProgressLine::ProgressLine() : on_(!quiet && isatty(STDERR_FILENO)) {}

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
    if (!thread_.joinable() && !done_) {
      start_ = std::chrono::steady_clock::now();
      thread_ = std::thread([this] { run(); });
    }
  };
}

void ProgressLine::run() {
  const auto after = progress_after();
  std::unique_lock lock(mu_);
  if (after.count() == 0) draw();  // at once, however quick the load
  while (!cv_.wait_for(lock, std::chrono::milliseconds(200), [this] { return done_; })) {
    if (std::chrono::steady_clock::now() - start_ < after) continue;
    draw();
  }
}

void ProgressLine::draw() {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  fmt::print(stderr, "\r\033[K{}", progress_text(state_, elapsed));
  drawn_ = true;
}

}  // namespace shardscope::cli
