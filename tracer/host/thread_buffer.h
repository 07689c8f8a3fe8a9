// A single-producer single-consumer chunk list: the traced thread appends with one release store and no
// lock; the flusher thread drains committed records and frees chunks the producer has moved past. The list
// is bounded: when the flusher falls this far behind, new records are dropped and counted, never blocked on.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "tracer/host/record.h"

namespace shardscope::tracer {

class ThreadBuffer {
 public:
  static constexpr uint32_t kChunkRecords = 512;
  static constexpr uint32_t kMaxChunks = 256;  // about 17 MiB of records per thread

  ThreadBuffer(uint32_t track, int64_t os_tid) : track_(track), os_tid_(os_tid) { head_ = tail_ = new Chunk; }
  ~ThreadBuffer() {
    for (Chunk* c = head_; c;) {
      Chunk* next = c->next.load(std::memory_order_acquire);
      delete c;
      c = next;
    }
  }
  ThreadBuffer(const ThreadBuffer&) = delete;
  ThreadBuffer& operator=(const ThreadBuffer&) = delete;

  // Producer side (the owning thread only). nullptr: the buffer is full and the record was counted as dropped.
  Record* reserve() {
    if (pos_ == kChunkRecords) [[unlikely]] {
      if (!grow()) return nullptr;
    }
    return &tail_->records[pos_];
  }
  void commit() { tail_->committed.store(++pos_, std::memory_order_release); }

  // Consumer side (the flusher only): calls f(const Record&) for every record committed since the last drain.
  template <typename F>
  uint64_t drain(F&& f) {
    uint64_t n = 0;
    for (;;) {
      uint32_t committed = head_->committed.load(std::memory_order_acquire);
      for (; consumed_ < committed; ++consumed_, ++n) f(head_->records[consumed_]);
      if (committed < kChunkRecords) return n;
      Chunk* next = head_->next.load(std::memory_order_acquire);
      if (!next) return n;
      delete head_;  // the producer published `next` after its last write here
      head_ = next;
      consumed_ = 0;
      freed_.fetch_add(1, std::memory_order_release);
    }
  }

  // Records dropped because the buffer was full (read by the flusher; only ever grows).
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  uint32_t track() const { return track_; }
  int64_t os_tid() const { return os_tid_; }

 private:
  struct Chunk {
    Record records[kChunkRecords];
    std::atomic<uint32_t> committed{0};
    std::atomic<Chunk*> next{nullptr};
  };
  bool grow() {
    if (allocated_ - freed_.load(std::memory_order_acquire) >= kMaxChunks) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    Chunk* c = new Chunk;
    ++allocated_;
    tail_->next.store(c, std::memory_order_release);
    tail_ = c;
    pos_ = 0;
    return true;
  }

  // Producer-owned.
  alignas(64) Chunk* tail_;
  uint32_t pos_ = 0;
  uint64_t allocated_ = 1;
  std::atomic<uint64_t> dropped_{0};
  // Consumer-owned.
  alignas(64) Chunk* head_;
  uint32_t consumed_ = 0;
  std::atomic<uint64_t> freed_{0};
  const uint32_t track_;
  const int64_t os_tid_;
};

}  // namespace shardscope::tracer
