// Starts N real trainer processes with the torchrun variables, as a launcher would, and collects each one's
// exit code and output.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/temp_dir.h"

namespace shardscope::test {

struct Rank {
  pid_t pid = -1;
  int rc = -1;  // exit code, or 128 + signal
  std::filesystem::path out, err;
  std::string stdout_text() const { return slurp(out); }
  std::string stderr_text() const { return slurp(err); }
  static std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
};

inline int free_port() {
  // Distinct per test process (ctest runs them in parallel), and below Linux's ephemeral range (32768 and up)
  // so no connection's local port can already hold it.
  static int next = 20000 + int(getpid() % 1500) * 8;
  return next++;
}

// `world` (default n) is the WORLD_SIZE the ranks are told; more than n leaves the rest missing. `extra[r]`,
// where given, is appended to rank r's arguments (ranks started with different flags). `port` (default: a
// free one) is their MASTER_PORT.
inline std::vector<Rank> start_ranks(int n, const std::vector<std::string>& args, const std::filesystem::path& dir,
                                     int world = -1, const std::vector<std::vector<std::string>>& extra = {},
                                     int port = -1) {
  if (world < 0) world = n;
  if (port < 0) port = free_port();
  std::vector<Rank> ranks(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    Rank& k = ranks[size_t(r)];
    k.out = dir / ("rank" + std::to_string(r) + ".out");
    k.err = dir / ("rank" + std::to_string(r) + ".err");
    k.pid = fork();
    if (k.pid == 0) {
      setenv("RANK", std::to_string(r).c_str(), 1);
      setenv("LOCAL_RANK", std::to_string(r).c_str(), 1);
      setenv("WORLD_SIZE", std::to_string(world).c_str(), 1);
      setenv("LOCAL_WORLD_SIZE", std::to_string(world).c_str(), 1);
      setenv("MASTER_ADDR", "127.0.0.1", 1);
      setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
      if (!freopen(k.out.c_str(), "w", stdout) || !freopen(k.err.c_str(), "w", stderr)) _exit(126);
      std::vector<char*> argv;
      argv.push_back(const_cast<char*>(TRAIN_BIN));
      for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      if (size_t(r) < extra.size())
        for (const std::string& a : extra[size_t(r)]) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(TRAIN_BIN, argv.data());
      _exit(127);
    }
  }
  return ranks;
}

// Waits for every rank, at most `timeout`; ranks still running then are killed and get rc -1.
inline void wait_ranks(std::vector<Rank>& ranks, std::chrono::seconds timeout = std::chrono::seconds(240)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (Rank& k : ranks) {
    for (;;) {
      int status = 0;
      pid_t p = waitpid(k.pid, &status, WNOHANG);
      if (p == k.pid) {
        k.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        break;
      }
      if (std::chrono::steady_clock::now() > deadline) {
        kill(k.pid, SIGKILL);
        waitpid(k.pid, &status, 0);
        k.rc = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
}

inline std::vector<Rank> run_ranks(int n, const std::vector<std::string>& args, const std::filesystem::path& dir) {
  auto ranks = start_ranks(n, args, dir);
  wait_ranks(ranks);
  return ranks;
}

inline std::vector<nlohmann::json> read_log(const std::filesystem::path& p) {
  std::vector<nlohmann::json> lines;
  std::ifstream in(p);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

inline std::vector<float> read_floats(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<float> v;
  float x;
  while (in.read(reinterpret_cast<char*>(&x), sizeof x)) v.push_back(x);
  return v;
}

}  // namespace shardscope::test
