// The ingest progress line: on stderr, only when stderr is a terminal and the load has taken its threshold
// (1 s; SHARDSCOPE_PROGRESS_AFTER_MS overrides it, so a test sees the line without a slow load). The real
// binary runs on a pseudo-terminal, as in a user's shell, and with stderr on a file, as in a pipeline.
#include <gtest/gtest.h>
#include <pty.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "analyzer/cli/progress_line.h"
#include "tests/support/run.h"
#include "tests/support/temp_dir.h"

namespace shardscope::test {
namespace {

constexpr const char* kTrace = R"JSON({"schemaVersion": 1, "traceEvents": [
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 10, "ts": 1.000, "dur": 1.000, "args": {"correlation": 1}},
{"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 10.000, "dur": 20.000, "args": {"stream": 7, "correlation": 1}}
], "distributedInfo": {"rank": 0, "world_size": 1}})JSON";

struct PtyResult {
  int rc = -1;
  std::string tty;  // everything the program wrote to its terminal (stdout and stderr)
};

// Runs argv with stdin, stdout and stderr on a fresh pseudo-terminal. `after_ms` empty: the variable unset.
PtyResult run_on_pty(const std::vector<std::string>& argv, const std::string& after_ms) {
  int master = -1;
  pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
  if (pid == 0) {
    if (after_ms.empty()) unsetenv("SHARDSCOPE_PROGRESS_AFTER_MS");
    else
      setenv("SHARDSCOPE_PROGRESS_AFTER_MS", after_ms.c_str(), 1);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  PtyResult r;
  if (pid < 0) return r;
  char buf[4096];
  // Read until the child closes the terminal (read fails with EIO then).
  for (ssize_t n; (n = read(master, buf, sizeof buf)) > 0;) r.tty.append(buf, size_t(n));
  close(master);
  int status = 0;
  waitpid(pid, &status, 0);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

class Progress : public ::testing::Test {
 protected:
  void SetUp() override { std::ofstream(dir_.path() / "trace.json") << kTrace; }
  std::string trace() const { return (dir_.path() / "trace.json").string(); }
  TempDir dir_;
};

TEST_F(Progress, ShownOnATerminalOnceTheThresholdPassesThenCleared) {
  PtyResult r = run_on_pty({SHARDSCOPE_BIN, "report", trace()}, "0");
  ASSERT_EQ(r.rc, 0) << r.tty;
  size_t line = r.tty.find("\r\033[Kingesting: ");
  ASSERT_NE(line, std::string::npos) << r.tty;
  EXPECT_NE(r.tty.find("/1 files, ", line), std::string::npos) << r.tty;
  // Erased before the report is printed, so the report starts on a clean line.
  size_t report = r.tty.find("shardscope report:");
  ASSERT_NE(report, std::string::npos) << r.tty;
  EXPECT_LT(line, report);
  EXPECT_EQ(r.tty.rfind("\r\033[K", report), report - 4) << r.tty;
}

TEST_F(Progress, NotShownOnATerminalForALoadQuickerThanASecond) {
  PtyResult r = run_on_pty({SHARDSCOPE_BIN, "report", trace()}, "");
  ASSERT_EQ(r.rc, 0) << r.tty;
  EXPECT_NE(r.tty.find("shardscope report:"), std::string::npos) << r.tty;
  EXPECT_EQ(r.tty.find("ingesting"), std::string::npos) << r.tty;
}

TEST_F(Progress, NeverShownWhenStderrIsNotATerminal) {
  setenv("SHARDSCOPE_PROGRESS_AFTER_MS", "0", 1);  // inherited by the child: the line would show at once
  RunResult r = run({SHARDSCOPE_BIN, "report", trace()});
  unsetenv("SHARDSCOPE_PROGRESS_AFTER_MS");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err.find("ingesting"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("\033[K"), std::string::npos) << r.err;
}

TEST_F(Progress, QuietKeepsATerminalClean) {
  for (const char* flag : {"--quiet", "-q"}) {
    PtyResult r = run_on_pty({SHARDSCOPE_BIN, "report", flag, trace()}, "0");
    ASSERT_EQ(r.rc, 0) << r.tty;
    EXPECT_NE(r.tty.find("shardscope report:"), std::string::npos) << r.tty;
    EXPECT_EQ(r.tty.find("ingesting"), std::string::npos) << flag << ": " << r.tty;
  }
  PtyResult check = run_on_pty({SHARDSCOPE_BIN, "check-prefetch", "--quiet", trace()}, "0");
  EXPECT_EQ(check.tty.find("ingesting"), std::string::npos) << check.tty;
  PtyResult diff = run_on_pty({SHARDSCOPE_BIN, "diff", "-q", trace(), trace()}, "0");
  EXPECT_EQ(diff.rc, 0) << diff.tty;
  EXPECT_EQ(diff.tty.find("ingesting"), std::string::npos) << diff.tty;
}

TEST(ProgressText, FilesBytesRateAndTimeLeft) {
  plugins::LoadProgress p{.files_done = 3, .files = 8, .bytes_done = 400'000'000, .bytes = 1'000'000'000};
  EXPECT_EQ(cli::progress_text(p, 2.0), "ingesting: 3/8 files, 400.0 of 1000.0 MB, 200.0 MB/s, 3 s left");
  p.bytes_done = 100'000'000;  // 1 MB/s: 900 s to go
  EXPECT_EQ(cli::progress_text(p, 100.0), "ingesting: 3/8 files, 100.0 of 1000.0 MB, 1.0 MB/s, 15 min 0 s left");
  p.bytes_done = 1'000'000, p.bytes = 20'000'000'000;
  EXPECT_EQ(cli::progress_text(p, 1.0), "ingesting: 3/8 files, 1.0 of 20000.0 MB, 1.0 MB/s, 5 h 33 min left");
  p.bytes_done = p.bytes, p.files_done = 8;
  EXPECT_EQ(cli::progress_text(p, 4.0), "ingesting: 8/8 files, 20000.0 of 20000.0 MB, 5000.0 MB/s");
  p.bytes_done = 999'000'000, p.bytes = 1'000'000'000;
  EXPECT_EQ(cli::progress_text(p, 1.0), "ingesting: 8/8 files, 999.0 of 1000.0 MB, 999.0 MB/s, under 1 s left");
}

TEST(ProgressText, NoRateBeforeTheFirstFileIsDone) {
  plugins::LoadProgress p{.files_done = 0, .files = 1, .bytes_done = 0, .bytes = 1'000'000'000};
  EXPECT_EQ(cli::progress_text(p, 0.0), "ingesting: 0/1 files, 0.0 of 1000.0 MB, under 1 s so far");
  EXPECT_EQ(cli::progress_text(p, 75.0), "ingesting: 0/1 files, 0.0 of 1000.0 MB, 1 min 15 s so far");
}

// In the process itself: stderr on a file gives no callback, so the loader reports to nobody and nothing is
// written, whatever the threshold.
TEST(ProgressLine, SilentWhenStderrIsAFile) {
  TempDir dir;
  const std::string path = (dir.path() / "err.txt").string();
  fflush(stderr);
  int saved = dup(STDERR_FILENO);
  FILE* f = fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  dup2(fileno(f), STDERR_FILENO);
  setenv("SHARDSCOPE_PROGRESS_AFTER_MS", "0", 1);
  bool has_callback = true;
  {
    cli::ProgressLine line;
    has_callback = bool(line.callback());
  }
  unsetenv("SHARDSCOPE_PROGRESS_AFTER_MS");
  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  fclose(f);
  EXPECT_FALSE(has_callback);
  std::ifstream in(path);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "");
}

}  // namespace
}  // namespace shardscope::test
