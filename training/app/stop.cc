#include "training/app/stop.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "tracer/format/keys.h"
#include "tracer/tracer.h"

namespace shardscope::train {
namespace {

namespace tr = shardscope::tracer;

// The step in progress, for a signal that stops the rank in the middle of it (-1: none).
std::atomic<int> g_step{-1};
std::atomic<int64_t> g_step_start_ns{0};
uint32_t g_compute_track = 0;
std::string g_who, g_log_path;  // set before any signal is watched
int g_signal_pipe[2] = {-1, -1};

void on_stop_signal(int sig) {
  const unsigned char c = static_cast<unsigned char>(sig);
  [[maybe_unused]] ssize_t n = write(g_signal_pipe[1], &c, 1);
}

// The step in progress is recorded as aborted, the trace is closed, and the signal then ends the process as
// it would have.
void on_stop_thread(int rank) {
  unsigned char c = 0;
  while (read(g_signal_pipe[0], &c, 1) < 0 && errno == EINTR) {}
  const int sig = c;
  const std::string reason = std::string("stopped by ") + (sig == SIGINT ? "SIGINT" : "SIGTERM");
  if (const int step = g_step.exchange(-1); step >= 0) {
    tr::complete(g_compute_track, keys::kStepRange, keys::kCatStep, g_step_start_ns.load(), tr::now_ns(),
                 {{keys::kArgStep, int64_t(step)}, {keys::kArgAborted, tr::intern(reason)}});
    report_aborted(step, rank, reason);
  }
  tr::stop();
  std::fflush(stdout);
  std::fflush(stderr);
  signal(sig, SIG_DFL);
  raise(sig);
}

}  // namespace

void fail(int code, const std::string& rank_prefix, const std::string& msg) {
  const std::string line = fit_line("shardscope-train: " + rank_prefix + "error: " + first_line(msg));
  std::fprintf(stderr, "%s\n", line.c_str());
  tr::stop();  // whatever was recorded reaches the file
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(code);
}

void report_aborted(int step, int rank, const std::string& reason) {
  std::printf("%s\n", fit_line(g_who + "step " + std::to_string(step) + " aborted: " + reason).c_str());
  std::fflush(stdout);
  if (!g_log_path.empty()) {
    std::ofstream log(g_log_path, std::ios::app);
    log << nlohmann::json{{"step", step}, {"rank", rank}, {"aborted", reason}}.dump() << "\n";
  }
}

void set_stop_context(const std::string& who, const std::string& log_path, uint32_t compute_track) {
  g_who = who;
  g_log_path = log_path;
  g_compute_track = compute_track;
}

void watch_stop_signals(int rank) {
  if (pipe2(g_signal_pipe, O_CLOEXEC) != 0) return;
  std::thread(on_stop_thread, rank).detach();
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
}

void begin_step(int step, int64_t start_ns) {
  g_step_start_ns = start_ns;
  g_step = step;
}

bool end_step() { return g_step.exchange(-1) >= 0; }

std::string first_line(std::string s) {
  if (auto nl = s.find('\n'); nl != std::string::npos) s.resize(nl);
  return s;
}

std::string short_reason(const std::string& what) { return fit_line(first_line(what), kMaxReasonChars); }

std::string fit_line(const std::string& s, size_t max) {
  if (s.size() <= max) return s;
  // Cut where a character starts (not inside a UTF-8 sequence).
  auto start_of_char = [&](size_t i) {
    while (i > 0 && i < s.size() && (static_cast<unsigned char>(s[i]) & 0xc0) == 0x80) --i;
    return i;
  };
  const std::string gap = " ... ";
  const size_t tail = start_of_char(s.size() - max / 3);
  const size_t head = start_of_char(max - (s.size() - tail) - gap.size());
  return s.substr(0, head) + gap + s.substr(tail);
}

}  // namespace shardscope::train
