#include "training/comm/rendezvous.h"

#include <unistd.h>

#include <cstdlib>
#include <stdexcept>
#include <vector>

#include <c10/util/Logging.h>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

namespace shardscope::train {
namespace {

constexpr auto kHeartbeatEvery = std::chrono::milliseconds(500);

std::optional<int> env_int(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  char* end = nullptr;
  long x = std::strtol(v, &end, 10);
  if (*end != '\0' || x < 0 || x > 1'000'000)
    throw std::invalid_argument(std::string(name) + "='" + v + "' is not a non-negative integer");
  return int(x);
}

// libtorch's message, fit for one line of ours: its first line (a c10::Error carries a backtrace after it),
// cut to a length that leaves room for what we say around it.
std::string short_reason(const std::string& what) {
  std::string s = what.substr(0, what.find('\n'));
  if (s.size() > 120) s = s.substr(0, 117) + "...";
  return s;
}

// libtorch's c10d logs each failed bind or connect try on stderr ("W... socket.cpp:426] [c10d] ..."); the
// rendezvous says what went wrong in one line of its own, so those are held back while it runs.
#ifdef C10_USE_GLOG
auto& libtorch_log_level() { return FLAGS_minloglevel; }
#else
auto& libtorch_log_level() { return FLAGS_caffe2_log_level; }
#endif

class QuietLibtorchLog {
 public:
  QuietLibtorchLog() : saved_(libtorch_log_level()) { libtorch_log_level() = 3; }  // FATAL only
  ~QuietLibtorchLog() { libtorch_log_level() = saved_; }

 private:
  int saved_;
};

}  // namespace

WorldEnv read_world_env() {
  WorldEnv e;
  e.world_size = env_int("WORLD_SIZE").value_or(1);
  e.rank = env_int("RANK").value_or(0);
  e.local_rank = env_int("LOCAL_RANK").value_or(e.rank);
  e.local_world_size = env_int("LOCAL_WORLD_SIZE").value_or(e.world_size);
  if (const char* a = std::getenv("MASTER_ADDR"); a && *a) e.master_addr = a;
  e.master_port = env_int("MASTER_PORT").value_or(29500);
  if (e.world_size < 1) throw std::invalid_argument("WORLD_SIZE must be at least 1");
  if (e.rank >= e.world_size)
    throw std::invalid_argument("RANK=" + std::to_string(e.rank) +
                                " is not below WORLD_SIZE=" + std::to_string(e.world_size));
  if (e.local_world_size < 1 || e.local_rank >= e.local_world_size)
    throw std::invalid_argument("LOCAL_RANK=" + std::to_string(e.local_rank) +
                                " is not below LOCAL_WORLD_SIZE=" + std::to_string(e.local_world_size));
  if (e.master_port < 1 || e.master_port > 65535) throw std::invalid_argument("MASTER_PORT is not a TCP port");
  return e;
}

Rendezvous::Rendezvous(const WorldEnv& env, std::chrono::milliseconds timeout) : env_(env) {
  if (env.world_size == 1) {
    // No one to meet: an in-process store, and no port bound (a busy MASTER_PORT is no concern of this run).
    store_ = std::make_shared<c10d::HashStore>();
    return;
  }
  const std::string at = env.master_addr + ":" + std::to_string(env.master_port);
  c10d::TCPStoreOptions o;
  o.port = uint16_t(env.master_port);
  o.isServer = env.rank == 0;
  o.numWorkers = size_t(env.world_size);
  o.waitWorkers = false;  // the arrival count below waits, for every rank alike
  o.timeout = timeout;
  QuietLibtorchLog quiet;
  try {
    store_ = std::make_shared<c10d::TCPStore>(env.master_addr, o);
  } catch (const std::exception& e) {
    const std::string what = e.what(), why = short_reason(what);
    if (env.rank != 0) throw std::runtime_error("cannot reach rank 0's rendezvous at " + at + ": " + why);
    if (what.find("Address already in use") != std::string::npos || what.find("errno: 98") != std::string::npos)
      throw std::runtime_error("rank 0 cannot host the rendezvous at " + at +
                               ": the port is in use (set MASTER_PORT to a free port)");
    throw std::runtime_error("rank 0 cannot host the rendezvous at " + at + ": " + why);
  }
  int64_t arrived = 0;
  try {
    c10d::TCPStoreOptions client = o;
    client.isServer = false;
    client.numWorkers = {};  // empty: c10::optional in libtorch 1.13, std::optional in 2.x
    heartbeat_store_ = std::make_shared<c10d::TCPStore>(env.master_addr, client);
    // Count ourselves in and wait for the others.
    store_->add("shardscope/arrived", 1);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while ((arrived = store_->add("shardscope/arrived", 0)) < env.world_size) {
      if (std::chrono::steady_clock::now() > deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  } catch (const std::exception& e) {
    throw std::runtime_error("rendezvous at " + at + " failed: " + short_reason(e.what()));
  }
  if (arrived < env.world_size)
    throw std::runtime_error("rendezvous at " + at + " with " + std::to_string(env.world_size) +
                             " ranks did not complete within " + std::to_string(timeout.count() / 1000) + " s (" +
                             std::to_string(arrived) + " arrived)");
  heartbeat_ = std::thread([this] { heartbeat_loop(); });
}

Rendezvous::~Rendezvous() {
  stop_ = true;
  if (heartbeat_.joinable()) heartbeat_.join();
}

std::string Rendezvous::gloo_host() const {
  if (env_.master_addr == "localhost" || env_.master_addr.rfind("127.", 0) == 0) return "127.0.0.1";
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return host;
}

void Rendezvous::heartbeat_loop() {
  const std::string key = "shardscope/heartbeat/" + std::to_string(env_.rank);
  while (!stop_) {
    try {
      heartbeat_store_->add(key, 1);
    } catch (const std::exception&) {
      return;  // the store (rank 0) is gone; diagnose_lost_peer says so
    }
    for (int i = 0; i < 5 && !stop_; ++i) std::this_thread::sleep_for(kHeartbeatEvery / 5);
  }
}

std::string Rendezvous::diagnose_lost_peer() {
  if (env_.world_size == 1) return "a one-rank run has no peer to lose";
  // The first rank to diagnose publishes its verdict; the others repeat it, so every rank names the same peer
  // even when the peers that noticed first have already exited.
  const std::string verdict_key = "shardscope/lost_peer";
  try {
    if (store_->check({verdict_key})) {
      auto v = store_->get(verdict_key);
      return std::string(v.begin(), v.end());
    }
    auto read = [&] {
      std::vector<int64_t> beats(size_t(env_.world_size));
      for (int r = 0; r < env_.world_size; ++r)
        beats[size_t(r)] = store_->add("shardscope/heartbeat/" + std::to_string(r), 0);
      return beats;
    };
    auto before = read();
    std::this_thread::sleep_for(4 * kHeartbeatEvery);
    auto after = read();
    std::string lost;
    for (int r = 0; r < env_.world_size; ++r)
      if (r != env_.rank && after[size_t(r)] == before[size_t(r)])
        lost += (lost.empty() ? "rank " : ", rank ") + std::to_string(r);
    if (lost.empty()) return "no peer stopped its heartbeat (a collective timed out or failed)";
    std::string verdict = "lost " + lost + " (its heartbeat stopped)";
    // compareSet: only the first verdict is kept.
    auto kept = store_->compareSet(verdict_key, {}, std::vector<uint8_t>(verdict.begin(), verdict.end()));
    return std::string(kept.begin(), kept.end());
  } catch (const std::exception&) {
    return "lost rank 0 (it hosts the rendezvous store, which stopped answering)";
  }
}

bool Rendezvous::hosts_store() const { return env_.rank == 0 && env_.world_size > 1; }

}  // namespace shardscope::train
