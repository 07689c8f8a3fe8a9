// A traced process killed with SIGKILL leaves a loadable file missing at most about one flush interval.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "tests/support/temp_dir.h"
#include "tracer/format/reader.h"

namespace {

TEST(SigKill, FileLoadsAndLosesAtMostTheLastInterval) {
  shardscope::test::TempDir dir;
  for (std::string name : {"killed.json", "killed.json.gz"}) {
    auto out = dir.path() / name;
    constexpr int kFlushMs = 50;
    int pipefd[2];
    ASSERT_EQ(pipe(pipefd), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      dup2(pipefd[1], STDOUT_FILENO);
      close(pipefd[0]);
      execl(TRACE_CHILD, TRACE_CHILD, out.c_str(), std::to_string(kFlushMs).c_str(), nullptr);
      _exit(127);
    }
    close(pipefd[1]);
    FILE* in = fdopen(pipefd[0], "r");
    long long last = -1, seq;
    // Let it run through several flush intervals, then kill it without warning.
    while (last < 400 && std::fscanf(in, "%lld", &seq) == 1) last = seq;
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    fclose(in);
    ASSERT_TRUE(WIFSIGNALED(status));
    ASSERT_EQ(last, 400) << "child stopped early";

    shardscope::trace::TraceFile f = shardscope::trace::read_trace(out);
    EXPECT_TRUE(f.truncated.has_value()) << name << ": a killed process cannot have closed its file";
    std::vector<long long> ticks;
    for (const auto& e : f.events)
      if (e.name == "tick") ticks.push_back(e.args["seq"].get<long long>());
    ASSERT_FALSE(ticks.empty()) << name;
    for (size_t i = 0; i < ticks.size(); ++i) ASSERT_EQ(ticks[i], (long long)i) << name << ": a gap";
    // Ticks come about one a millisecond; allow two intervals (a flush may be under way) of loss.
    EXPECT_GE(ticks.back(), last - 2 * kFlushMs) << name << ": lost more than the last interval";
    EXPECT_EQ(f.shardscope["rank"], 0);
  }
}

}  // namespace
