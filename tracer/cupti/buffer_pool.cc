#include "tracer/cupti/buffer_pool.h"

#include <cstdlib>

namespace shardscope::tracer::cupti {

namespace {
// CUPTI requires buffers aligned to ACTIVITY_RECORD_ALIGNMENT (8); a page costs nothing more.
constexpr size_t kAlign = 4096;
}  // namespace

BufferPool::~BufferPool() {
  for (uint8_t* b : all_) std::free(b);
}

uint8_t* BufferPool::acquire() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!free_.empty()) {
    uint8_t* b = free_.back();
    free_.pop_back();
    return b;
  }
  if (all_.size() >= max_) {
    ++refused_;
    return nullptr;
  }
  auto* b = static_cast<uint8_t*>(std::aligned_alloc(kAlign, (bytes_ + kAlign - 1) / kAlign * kAlign));
  if (!b) {
    ++refused_;
    return nullptr;
  }
  all_.push_back(b);
  return b;
}

void BufferPool::release(uint8_t* buffer) {
  if (!buffer) return;
  std::lock_guard<std::mutex> lock(mu_);
  free_.push_back(buffer);
}

size_t BufferPool::allocated() const {
  std::lock_guard<std::mutex> lock(mu_);
  return all_.size();
}

uint64_t BufferPool::refused() const {
  std::lock_guard<std::mutex> lock(mu_);
  return refused_;
}

}  // namespace shardscope::tracer::cupti
