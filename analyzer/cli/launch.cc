#include "analyzer/cli/launch.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace shardscope::cli {
namespace {

volatile sig_atomic_t g_interrupted = 0;
// Set when stdout could not be written (a full disk, a closed pipe, /dev/full): the errno, or -1 when none was
// set. The ranks' lines are then read and dropped, so that no rank blocks on a full pipe, and the launch
// ends in one error line and exit 2, as every other command does.
int g_stdout_failed = 0;

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
  errno = 0;
  while ((nl = c.partial.find('\n', start)) != std::string::npos) {
    if (!g_stdout_failed) std::printf("[rank %d] %.*s\n", c.rank, int(nl - start), c.partial.data() + start);
    start = nl + 1;
  }
  c.partial.erase(0, start);
  if (!g_stdout_failed && (std::fflush(stdout) != 0 || std::ferror(stdout))) g_stdout_failed = errno ? errno : -1;
}

// The rank's output channel: a pseudo-terminal when one can be had, since a program writing to a pipe
// buffers its stdout in blocks (C stdio, std::cout, Python, Perl) and would show nothing until it exits -- and
// lose what it buffered when it is stopped. On a terminal the same programs flush at every line.
// Falls back to a pipe. Returns {read end, write end} or {-1, -1}.
std::pair<int, int> open_channel() {
  int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master >= 0 && grantpt(master) == 0 && unlockpt(master) == 0) {
    if (const char* name = ptsname(master)) {
      int slave = open(name, O_RDWR | O_NOCTTY);
      if (slave >= 0) {
        termios t{};
        if (tcgetattr(slave, &t) == 0) {
          t.c_oflag &= ~tcflag_t(OPOST);  // keep "\n" as written, not "\r\n"
          t.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG);
          tcsetattr(slave, TCSANOW, &t);
        }
        return {master, slave};
      }
    }
  }
  if (master >= 0) close(master);
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return {-1, -1};
  return {p[0], p[1]};
}

// Reads what one rank has written so far; false at its end (EOF, or EIO once a terminal's writer is gone).
bool read_some(Child& c) {
  char buf[65536];
  ssize_t n;
  do n = read(c.fd, buf, sizeof buf);
  while (n < 0 && errno == EINTR);
  if (n > 0) {
    emit(c, buf, size_t(n));
    return true;
  }
  if (n < 0 && errno == EAGAIN) return true;
  if (!c.partial.empty()) emit(c, "\n", 1);  // a last line without its newline is still shown
  close(c.fd);
  c.fd = -1;
  return false;
}

// Shows everything the ranks have written up to now, so that nothing they wrote is lost when they are stopped.
void drain(std::vector<Child>& children) {
  for (int round = 0; round < 1000; ++round) {
    bool more = false;
    for (Child& c : children) {
      if (c.fd < 0) continue;
      pollfd f{c.fd, POLLIN, 0};
      if (poll(&f, 1, 0) > 0 && (f.revents & (POLLIN | POLLHUP | POLLERR)) && read_some(c)) more = true;
    }
    if (!more) return;
  }
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
    auto [rd, wr] = open_channel();
    if (rd < 0) {
      std::perror("shardscope launch: pipe");
      return 2;
    }
    Child c{r};
    c.pid = fork();
    if (c.pid == 0) {
      // Its own process group, so that stopping the rank stops what it started too (a wrapper script's
      // program, a background child): one left running would hold the rank's output open, and launch waits.
      setpgid(0, 0);
      dup2(wr, STDOUT_FILENO);
      dup2(wr, STDERR_FILENO);
      close(rd);
      close(wr);
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
    setpgid(c.pid, c.pid);  // also here: a stop may come before the child has run
    close(wr);
    fcntl(rd, F_SETFL, fcntl(rd, F_GETFL) | O_NONBLOCK);
    c.fd = rd;
    children.push_back(std::move(c));
  }

  int result = 0;
  bool stopping = false;
  auto stop_deadline = std::chrono::steady_clock::time_point::max();
  auto stop_all = [&](const std::string& why) {
    if (stopping) return;
    stopping = true;
    drain(children);
    std::fprintf(stderr, "shardscope launch: %s; stopping the other ranks\n", why.c_str());
    for (Child& c : children)  // a rank that ended may have left children holding its output
      if (c.running || c.fd >= 0) kill(-c.pid, SIGTERM);
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
    else
      usleep(50'000);
    for (const pollfd& f : fds) {
      if (!(f.revents & (POLLIN | POLLHUP | POLLERR))) continue;
      for (Child& c : children)
        if (c.fd == f.fd) read_some(c);
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
        if (c.running || c.fd >= 0) kill(-c.pid, SIGKILL);
      stop_deadline = std::chrono::steady_clock::time_point::max();
    }
  }
  if (!g_stdout_failed && (std::fflush(stdout) != 0 || std::ferror(stdout))) g_stdout_failed = errno ? errno : -1;
  if (g_stdout_failed) {
    std::fprintf(stderr, "shardscope: error: cannot write to standard output%s%s\n", g_stdout_failed > 0 ? ": " : "",
                 g_stdout_failed > 0 ? std::strerror(g_stdout_failed) : "");
    return 2;
  }
  return result;
}

}  // namespace shardscope::cli
