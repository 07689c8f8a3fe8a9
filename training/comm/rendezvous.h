// Ranks meet by the torchrun convention (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT) through a TCP store hosted by rank 0, so torchrun, srun, mpirun or `shardscope launch` can
// start the ranks. The store also carries heartbeats, so a rank that loses a peer can name it. A one-rank
// run meets no one: its store lives in the process and it binds no port.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>

namespace c10d {
class Store;
}

namespace shardscope::train {

struct WorldEnv {
  int rank = 0, local_rank = 0, world_size = 1, local_world_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
};

// Reads the variables; a missing WORLD_SIZE means a single-rank run. Throws std::invalid_argument naming a
// malformed or inconsistent variable.
WorldEnv read_world_env();

class Rendezvous {
 public:
  // Throws std::runtime_error, one line, when rank 0 cannot listen on MASTER_PORT, the store cannot be reached,
  // or not every rank arrives within `timeout`.
  Rendezvous(const WorldEnv& env, std::chrono::milliseconds timeout);
  ~Rendezvous();
  const WorldEnv& env() const { return env_; }
  c10d::Store& store() { return *store_; }
  // The address this rank's Gloo device listens on.
  std::string gloo_host() const;

  // After a collective failed: which peer stopped sending heartbeats ("rank 3"), or why that is unknown.
  std::string diagnose_lost_peer();
  // Rank 0 hosts the store: when it fails it should linger a little so the others can still diagnose.
  bool hosts_store() const;

 private:
  void heartbeat_loop();
  WorldEnv env_;
  std::shared_ptr<c10d::Store> store_;
  std::shared_ptr<c10d::Store> heartbeat_store_;  // its own connection: the store client is not shared across threads
  std::atomic<bool> stop_{false};
  std::thread heartbeat_;
};

}  // namespace shardscope::train
