#include "training/comm/comm_stream.h"

#include <pthread.h>

#include "tracer/tracer.h"

namespace shardscope::train {

CommStream::CommStream(std::string name) : name_(std::move(name)), thread_([this] { run(); }) {}

CommStream::~CommStream() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    queue_.clear();  // nobody waits for these any more (a step failed): do not run them
  }
  cv_.notify_all();
  thread_.join();
}

Work CommStream::issue(std::function<void()> collective) {
  std::packaged_task<void()> task(std::move(collective));
  Work w = task.get_future().share();
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(task));
    last_ = w;
  }
  cv_.notify_one();
  return w;
}

void CommStream::synchronize() {
  Work w;
  {
    std::lock_guard<std::mutex> lock(mu_);
    w = last_;
  }
  if (w.valid()) w.get();
}

void CommStream::run() {
  pthread_setname_np(pthread_self(), name_.substr(0, 15).c_str());
  tracer::name_this_thread(name_);
  for (;;) {
    std::packaged_task<void()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();  // an exception lands in the task's future
  }
}

}  // namespace shardscope::train
