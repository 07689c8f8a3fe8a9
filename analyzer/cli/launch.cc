#include "analyzer/cli/launch.h"

#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>

namespace shardscope::cli {
namespace {

volatile sig_atomic_t g_interrupted = 0;

int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = 29500;
  if (fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  if (fd >= 0) close(fd);
  return port;
}

struct Child {
  int rank;
  pid_t pid = -1;
  int fd = -1;  // stdout and stderr, merged
  std::string partial;
  bool running = true;
  int code = 0;
};

void emit(Child& c, const char* data, size_t n) {
  c.partial.append(data, n);
  size_t start = 0, nl;
  while ((nl = c.partial.find('\n', start)) != std::string::npos) {
    std::printf("[rank %d] %.*s\n", c.rank, int(nl - start), c.partial.data() + start);
    start = nl + 1;
  }
  c.partial.erase(0, start);
  std::fflush(stdout);
}

std::string describe(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with code {}", WEXITSTATUS(status));
  return fmt::format("was killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
}

}  // namespace

int launch(const LaunchOptions& o) {
  if (o.command.empty()) {
    std::fprintf(stderr, "shardscope launch: no program given (shardscope launch -n N -- PROGRAM ARGS...)\n");
    return 2;
  }
  const int port = o.master_port > 0 ? o.master_port : free_port();
  signal(SIGINT, [](int) { g_interrupted = 1; });
  signal(SIGTERM, [](int) { g_interrupted = 1; });

  std::vector<Child> children;
  for (int r = 0; r < o.ranks; ++r) {
    int p[2];
    if (pipe(p) != 0) {
      std::perror("shardscope launch: pipe");
      return 2;
    }
    Child c{r};
    c.pid = fork();
    if (c.pid == 0) {
      dup2(p[1], STDOUT_FILENO);
      dup2(p[1], STDERR_FILENO);
      close(p[0]);
      close(p[1]);
      setenv("RANK", std::to_string(r).c_str(), 1);
      setenv("LOCAL_RANK", std::to_string(r).c_str(), 1);
      setenv("WORLD_SIZE", std::to_string(o.ranks).c_str(), 1);
      setenv("LOCAL_WORLD_SIZE", std::to_string(o.ranks).c_str(), 1);
      setenv("MASTER_ADDR", "127.0.0.1", 1);
      setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
      std::vector<char*> argv;
      for (const std::string& a : o.command) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execvp(argv[0], argv.data());
      std::fprintf(stderr, "shardscope launch: cannot run %s: %s\n", argv[0], std::strerror(errno));
      _exit(127);
    }
    close(p[1]);
    c.fd = p[0];
    children.push_back(std::move(c));
  }

  int result = 0;
  bool stopping = false;
  auto stop_deadline = std::chrono::steady_clock::time_point::max();
  auto stop_all = [&](const std::string& why) {
    if (stopping) return;
    stopping = true;
    std::fprintf(stderr, "shardscope launch: %s; stopping the other ranks\n", why.c_str());
    for (Child& c : children)
      if (c.running) kill(c.pid, SIGTERM);
    stop_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(o.grace_seconds);
  };

  for (;;) {
    std::vector<pollfd> fds;
    for (Child& c : children)
      if (c.fd >= 0) fds.push_back({c.fd, POLLIN, 0});
    bool any_running = false;
    for (Child& c : children) any_running |= c.running;
    if (fds.empty() && !any_running) break;
    if (!fds.empty()) poll(fds.data(), nfds_t(fds.size()), 100);
    else usleep(50'000);
    for (const pollfd& f : fds) {
      if (!(f.revents & (POLLIN | POLLHUP | POLLERR))) continue;
      for (Child& c : children) {
        if (c.fd != f.fd) continue;
        char buf[65536];
        ssize_t n = read(c.fd, buf, sizeof buf);
        if (n > 0) {
          emit(c, buf, size_t(n));
        } else {
          if (!c.partial.empty()) emit(c, "\n", 1);
          close(c.fd);
          c.fd = -1;
        }
      }
    }
    for (Child& c : children) {
      if (!c.running) continue;
      int status = 0;
      if (waitpid(c.pid, &status, WNOHANG) != c.pid) continue;
      c.running = false;
      c.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      if (c.code != 0 && !stopping) {
        result = c.code;
        stop_all(fmt::format("rank {} {}", c.rank, describe(status)));
      }
    }
    if (g_interrupted && !stopping) {
      result = 130;
      stop_all("interrupted");
    }
    if (stopping && std::chrono::steady_clock::now() > stop_deadline) {
      for (Child& c : children)
        if (c.running) kill(c.pid, SIGKILL);
      stop_deadline = std::chrono::steady_clock::time_point::max();
    }
  }
  return result;
}

}  // namespace shardscope::cli
