// The activity buffers handed to CUPTI: a fixed size each and a fixed number at most, reused once read, so a
// program that makes GPU records faster than we write them loses records (CUPTI counts them as dropped)
// instead of memory. Thread-safe: CUPTI asks for buffers from its own threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace shardscope::tracer::cupti {

class BufferPool {
 public:
  BufferPool(size_t buffer_bytes, size_t max_buffers) : bytes_(buffer_bytes), max_(max_buffers) {}
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // A free buffer of buffer_bytes(), or nullptr when max_buffers are all out (counted in refused()).
  uint8_t* acquire();
  void release(uint8_t* buffer);

  size_t buffer_bytes() const { return bytes_; }
  size_t allocated() const;
  uint64_t refused() const;

 private:
  const size_t bytes_, max_;
  mutable std::mutex mu_;
  std::vector<uint8_t*> all_, free_;
  uint64_t refused_ = 0;
};

}  // namespace shardscope::tracer::cupti
