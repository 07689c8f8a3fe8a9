// A communication "stream" on CPU: one thread running collectives in issue order, as a CUDA stream would,
// so communication overlaps the compute thread. issue() returns at once; wait() on the Work blocks until the
// collective ran and rethrows its error.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <thread>

namespace shardscope::train {

using Work = std::shared_future<void>;

class CommStream {
 public:
  explicit CommStream(std::string name);
  ~CommStream();
  CommStream(const CommStream&) = delete;
  CommStream& operator=(const CommStream&) = delete;

  Work issue(std::function<void()> collective);
  // Waits for everything issued so far.
  void synchronize();

 private:
  void run();
  std::string name_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::packaged_task<void()>> queue_;
  bool stopping_ = false;
  Work last_;
  std::thread thread_;
};

}  // namespace shardscope::train
