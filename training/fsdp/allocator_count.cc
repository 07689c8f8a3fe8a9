#include "training/fsdp/allocator_count.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <malloc.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <unordered_map>

// CountingAllocator's two allocate() overloads hide each other by design (see there).
#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Woverloaded-virtual"
#endif

namespace shardscope::train {
namespace {

thread_local std::size_t t_tag = kUntagged;
std::array<std::atomic<int64_t>, kUntagged + 1> g_live{}, g_peak{};
std::atomic<bool> g_installed{false};

struct Record {
  c10::DataPtr inner;  // the wrapped allocator's pointer, freed with the record
  int64_t bytes = 0;
  std::size_t slot = kUntagged;
};

// By data pointer: the pointers handed out are plain (context == data), as raw_allocate() needs (libtorch's
// bf16 kernels allocate their scratch through it).
std::mutex g_mu;
std::unordered_map<void*, Record>& records() {
  static auto* m = new std::unordered_map<void*, Record>();  // never destroyed: frees may come at exit
  return *m;
}

void release(void* data) {
  Record r;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    auto it = records().find(data);
    if (it == records().end()) return;
    r = std::move(it->second);
    records().erase(it);
  }
  g_live[r.slot].fetch_sub(r.bytes);
}  // r.inner frees the memory here

class CountingAllocator final : public c10::Allocator {
 public:
  explicit CountingAllocator(c10::Allocator* inner) : inner_(inner) {}
  // libtorch 1.13 declares allocate() const, 2.x (from 2.3) non-const: one of these two overrides it in
  // whichever is built against, the other is a plain overload.
  c10::DataPtr allocate(std::size_t n) const { return count(n); }
  c10::DataPtr allocate(std::size_t n) { return count(n); }
  // Pure virtual in 2.x, absent from 1.13.
  void copy_data(void* dest, const void* src, std::size_t count) const { std::memcpy(dest, src, count); }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }

 private:
  c10::DataPtr count(std::size_t n) const {
    c10::DataPtr inner = inner_->allocate(n);
    void* data = inner.get();
    if (!data) return inner;  // zero bytes: nothing is held
    const std::size_t slot = t_tag;
    const int64_t bytes = int64_t(malloc_usable_size(data));
    const c10::Device device = inner.device();
    {
      std::lock_guard<std::mutex> lock(g_mu);
      records()[data] = Record{std::move(inner), bytes, slot};
    }
    const int64_t now = g_live[slot].fetch_add(bytes) + bytes;
    for (int64_t peak = g_peak[slot].load(); now > peak && !g_peak[slot].compare_exchange_weak(peak, now);) {}
    return c10::DataPtr(data, data, &release, device);
  }
  c10::Allocator* inner_;
};

}  // namespace

void count_cpu_allocations() {
  static std::once_flag once;
  std::call_once(once, [] {
    static CountingAllocator counting(c10::GetCPUAllocator());
    c10::SetCPUAllocator(&counting, /*priority=*/255);
    g_installed = true;
  });
}

bool counting_cpu_allocations() { return g_installed; }

AllocationTag::AllocationTag(Mem m) : previous_(t_tag) { t_tag = std::size_t(m); }
AllocationTag::~AllocationTag() { t_tag = previous_; }

AllocatorBytes allocator_bytes() {
  AllocatorBytes b{};
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = g_live[i].load();
  return b;
}

AllocatorBytes allocator_peaks() {
  AllocatorBytes b{};
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = g_peak[i].load();
  return b;
}

void reset_allocator_peaks() {
  for (std::size_t i = 0; i < g_peak.size(); ++i) g_peak[i] = g_live[i].load();
}

}  // namespace shardscope::train
