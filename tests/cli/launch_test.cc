// `shardscope launch` as a user runs it: real child processes, their variables, output and failures.
#include <gtest/gtest.h>

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "tests/support/run.h"
#include "tests/support/temp_dir.h"

namespace shardscope::test {
namespace {

using Clock = std::chrono::steady_clock;

// Runs launch with its stdout on a pipe read as it comes, noting when each line arrived and telling
// `on_line` of each as it does (a test answers a line while the ranks still run).
struct Streamed {
  std::vector<std::pair<std::string, Clock::time_point>> lines;
  Clock::time_point exited;
  int rc = -1;
  bool finished = false;
};

Streamed run_streamed(const std::vector<std::string>& argv, std::chrono::seconds limit,
                      const std::function<void(const std::string&)>& on_line = {}) {
  Streamed s;
  int p[2];
  if (pipe(p) != 0) return s;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(p[1], STDOUT_FILENO);
    close(p[0]);
    close(p[1]);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(p[1]);
  std::string partial;
  const auto deadline = Clock::now() + limit;
  for (;;) {
    pollfd f{p[0], POLLIN, 0};
    if (poll(&f, 1, 50) > 0) {
      char buf[4096];
      ssize_t n = read(p[0], buf, sizeof buf);
      if (n <= 0) break;
      partial.append(buf, size_t(n));
      for (size_t nl; (nl = partial.find('\n')) != std::string::npos; partial.erase(0, nl + 1)) {
        s.lines.emplace_back(partial.substr(0, nl), Clock::now());
        if (on_line) on_line(s.lines.back().first);
      }
    }
    if (Clock::now() > deadline) {
      kill(pid, SIGKILL);
      break;
    }
  }
  close(p[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  s.exited = Clock::now();
  s.finished = Clock::now() <= deadline;
  s.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return s;
}

const Clock::time_point* arrival(const Streamed& s, const std::string& line) {
  for (const auto& [text, at] : s.lines)
    if (text == line) return &at;
  return nullptr;
}

std::string joined(const Streamed& s) {
  std::string all;
  for (const auto& l : s.lines) all += l.first + "\n";
  return all;
}

TEST(Launch, GivesEachRankTheTorchrunVariablesAndPrefixesItsOutput) {
  RunResult r =
      run({SHARDSCOPE_BIN, "launch", "-n", "3", "--master-port", "29777", "--", "/bin/sh", "-c",
           "echo \"$RANK $LOCAL_RANK $WORLD_SIZE $LOCAL_WORLD_SIZE $MASTER_ADDR:$MASTER_PORT\"; echo err >&2"});
  EXPECT_EQ(r.rc, 0) << r.err;
  for (int k = 0; k < 3; ++k) {
    std::string rank = std::to_string(k);
    EXPECT_NE(r.out.find("[rank " + rank + "] " + rank + " " + rank + " 3 3 127.0.0.1:29777\n"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("[rank " + rank + "] err\n"), std::string::npos) << r.out;
  }
}

TEST(Launch, OneFailingRankStopsTheOthersAndSetsTheExitCode) {
  // The others would sleep for 10 minutes: each says it was stopped, which a rank that ran to its end never
  // does (a time bound would break on a loaded machine). The trap ends the sleep too, whose open stdout would
  // keep the launch waiting.
  // Rank 1 fails once both have their trap set (files in `d`), so the stop cannot come first.
  TempDir d;
  const std::string ready = d.path().string() + "/ready.";
  RunResult r = run({SHARDSCOPE_BIN, "launch", "-n", "3", "--", "/bin/sh", "-c",
                     "if [ \"$RANK\" = 1 ]; then while [ ! -e " + ready + "0 ] || [ ! -e " + ready +
                         "2 ]; do sleep 0.05; done; exit 7; fi; trap 'echo stopped; kill $!; exit 143' TERM; touch " +
                         ready + "$RANK; sleep 600 & wait"});
  for (const char* rank : {"0", "2"})
    EXPECT_NE(r.out.find(std::string("[rank ") + rank + "] stopped\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.rc, 7);
  EXPECT_NE(r.err.find("rank 1 exited with code 7; stopping the other ranks"), std::string::npos) << r.err;
}

// A rank's own children stop with it: a wrapper script's program, or a background child, left running would
// go on using the machine (and, holding the rank's output, keep launch waiting). Ranks 0 and 2 start a child
// whose output goes elsewhere, so that launch returns either way; rank 1 fails once both children run.
TEST(Launch, StoppingARankStopsWhatItStarted) {
  TempDir d;
  const std::string pid = d.path().string() + "/pid";
  RunResult r = run({SHARDSCOPE_BIN, "launch", "-n", "3", "--", "/bin/sh", "-c",
                     "if [ \"$RANK\" = 1 ]; then while [ ! -s " + pid + "0 ] || [ ! -s " + pid +
                         "2 ]; do sleep 0.05; done; exit 7; fi; sleep 100000 >/dev/null 2>&1 & echo $! > " + pid +
                         "$RANK.tmp && mv " + pid + "$RANK.tmp " + pid + "$RANK; wait"});
  EXPECT_EQ(r.rc, 7) << r.err;
  for (const char* rank : {"0", "2"}) {
    std::ifstream in(pid + rank);
    int child = 0;
    ASSERT_TRUE(in >> child) << rank;
    // Gone: no process, or a zombie not yet reaped by whoever adopted it. A stop is delivered at once; the
    // cap only keeps a failure from hanging the suite.
    auto gone = [&] {
      std::ifstream stat("/proc/" + std::to_string(child) + "/stat");
      std::string pid_field, comm, state;
      return !(stat >> pid_field >> comm >> state) || state == "Z";
    };
    const auto cap = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    while (!gone() && std::chrono::steady_clock::now() < cap) usleep(20'000);
    EXPECT_TRUE(gone()) << "rank " << rank << "'s child " << child << " still runs";
    if (!gone()) kill(child, SIGKILL);
  }
}

// Issue #25: ranks whose lines cannot be written (stdout on a full disk) still run to their end without
// blocking, and the launch ends in one error line and exit 2.
TEST(Launch, StdoutThatCannotBeWrittenIsAnErrorAndNoRankBlocks) {
  // A rank that blocked would hang the test until ctest's timeout: no time bound of its own.
  RunResult r =
      run({"/bin/sh", "-c", std::string(SHARDSCOPE_BIN) + " launch -n 2 -- /bin/sh -c 'seq 1 200000' > /dev/full"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err, "shardscope: error: cannot write to standard output: No space left on device\n");
}

TEST(Launch, AProgramThatCannotRunIsReported) {
  RunResult r = run({SHARDSCOPE_BIN, "launch", "-n", "2", "--", "/nonexistent/program"});
  EXPECT_EQ(r.rc, 127);
  EXPECT_NE(r.out.find("cannot run /nonexistent/program"), std::string::npos) << r.out;
  RunResult none = run({SHARDSCOPE_BIN, "launch", "-n", "2"});
  EXPECT_EQ(none.rc, 2);
}

// Perl, like C stdio, buffers a pipe in blocks: the first line can only arrive early if launch gives the rank
// a line-buffered channel and prints the line as soon as it comes. Rank 0 goes on only once the test has seen
// its first line (a file says so), so a first line held back until the rank ends is never answered: the rank
// gives up after 30 s and says so.
TEST(Launch, ShowsEachLineWhileTheRankIsStillRunning) {
  TempDir dir;
  const std::string seen = (dir.path() / "seen").string();
  Streamed s = run_streamed({SHARDSCOPE_BIN, "launch", "-n", "2", "--", "/bin/sh", "-c",
                             "if [ \"$RANK\" = 0 ]; then exec perl -e 'print \"first\\n\"; $t = 0; "
                             "while (!-e $ARGV[0] && $t++ < 600) { select(undef, undef, undef, 0.05) } "
                             "print -e $ARGV[0] ? \"second\\n\" : \"gave up waiting\\n\"; print \"no newline\"' " +
                                 seen + "; fi"},
                            std::chrono::seconds(90), [&](const std::string& line) {
                              if (line == "[rank 0] first") std::ofstream(seen) << "1";
                            });
  ASSERT_TRUE(s.finished) << joined(s);
  EXPECT_EQ(s.rc, 0);
  EXPECT_NE(arrival(s, "[rank 0] first"), nullptr) << joined(s);
  EXPECT_NE(arrival(s, "[rank 0] second"), nullptr) << "the first line waited for the rank to end\n" << joined(s);
  EXPECT_NE(arrival(s, "[rank 0] no newline"), nullptr) << joined(s);  // the unterminated last line
}

// Rank 1 fails only once rank 0 has written its step lines (the file says so); rank 0 is then stopped while
// still running, and its lines must all be in launch's output.
TEST(Launch, WhenARankFailsEveryLineTheOthersWroteIsShown) {
  TempDir dir;
  const std::string ready = (dir.path() / "ready").string();
  Streamed s = run_streamed(
      {SHARDSCOPE_BIN, "launch", "-n", "2", "--", "/bin/sh", "-c",
       "if [ \"$RANK\" = 0 ]; then exec perl -e 'print \"step $_ done\\n\" for 1..5; open F, \">\", $ARGV[0]; "
       "close F; sleep 60' " +
           ready + "; fi; while [ ! -e " + ready + " ]; do sleep 0.05; done; echo failing; exit 3"},
      std::chrono::seconds(50));
  ASSERT_TRUE(s.finished) << joined(s);
  EXPECT_EQ(s.rc, 3);
  for (int k = 1; k <= 5; ++k)
    EXPECT_NE(arrival(s, "[rank 0] step " + std::to_string(k) + " done"), nullptr) << k << "\n" << joined(s);
  EXPECT_NE(arrival(s, "[rank 1] failing"), nullptr) << joined(s);
}

}  // namespace
}  // namespace shardscope::test
