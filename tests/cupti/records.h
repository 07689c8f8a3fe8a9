// Synthetic CUPTI 13.0 activity records, built in memory with the real structs from cupti_activity.h, as
// CUPTI would hand them over in an activity buffer. Fields a test does not set are zero.
#pragma once

#include <cupti.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "tracer/format/serialize.h"

namespace shardscope::test {

class Records {
 public:
  CUpti_ActivityKernel10& kernel(const char* name, uint32_t corr, uint32_t device, uint32_t ctx, uint32_t stream,
                                 uint64_t start, uint64_t end) {
    auto& k = add(kernels_, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    k.name = name;
    k.correlationId = corr;
    k.deviceId = device;
    k.contextId = ctx;
    k.streamId = stream;
    k.start = start;
    k.end = end;
    return k;
  }
  CUpti_ActivityMemcpy6& memcpy(uint8_t copy_kind, uint64_t bytes, uint32_t corr, uint32_t device, uint32_t stream,
                                uint64_t start, uint64_t end) {
    auto& m = add(memcpys_, CUPTI_ACTIVITY_KIND_MEMCPY);
    m.copyKind = copy_kind;
    m.bytes = bytes;
    m.correlationId = corr;
    m.deviceId = device;
    m.contextId = 1;
    m.streamId = stream;
    m.start = start;
    m.end = end;
    return m;
  }
  CUpti_ActivityMemset4& memset(uint32_t value, uint64_t bytes, uint32_t corr, uint32_t device, uint32_t stream,
                                uint64_t start, uint64_t end) {
    auto& m = add(memsets_, CUPTI_ACTIVITY_KIND_MEMSET);
    m.value = value;
    m.bytes = bytes;
    m.correlationId = corr;
    m.deviceId = device;
    m.contextId = 1;
    m.streamId = stream;
    m.start = start;
    m.end = end;
    return m;
  }
  CUpti_ActivityAPI& api(CUpti_ActivityKind kind, uint32_t cbid, uint32_t corr, uint32_t thread, uint64_t start,
                         uint64_t end) {
    auto& a = add(apis_, kind);
    a.cbid = cbid;
    a.correlationId = corr;
    a.processId = 1;
    a.threadId = thread;
    a.start = start;
    a.end = end;
    return a;
  }
  CUpti_ActivityMarker2& marker(CUpti_ActivityFlag flags, uint32_t id, uint64_t ts, uint32_t thread, const char* name,
                                const char* domain) {
    auto& m = add(markers_, CUPTI_ACTIVITY_KIND_MARKER);
    m.flags = flags;
    m.id = id;
    m.timestamp = ts;
    m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    m.objectId.pt.processId = 1;
    m.objectId.pt.threadId = thread;
    m.name = name;
    m.domain = domain;
    return m;
  }
  // A START/END pair; CUPTI leaves name and domain NULL on the END record.
  void range(uint32_t id, uint64_t start, uint64_t end, uint32_t thread, const char* name, const char* domain) {
    marker(CUPTI_ACTIVITY_FLAG_MARKER_START, id, start, thread, name, domain);
    marker(CUPTI_ACTIVITY_FLAG_MARKER_END, id, end, thread, nullptr, nullptr);
  }
  CUpti_ActivityMarkerData2& marker_data(uint32_t id) {
    auto& d = add(marker_data_, CUPTI_ACTIVITY_KIND_MARKER_DATA);
    d.id = id;
    return d;
  }
  // MARKER_DATA with an NVTX extended payload: `data` points at an nvtxPayloadData_t, as CUPTI's does.
  CUpti_ActivityMarkerData2& marker_ext_payload(uint32_t id, uint32_t cupti_domain, const void* data) {
    auto& d = marker_data(id);
    d.payloadKind = CUPTI_METRIC_VALUE_KIND_NVTX_EXTENDED_PAYLOAD;
    d.payload.metricValueNvtxExtendedPayload = uint64_t(reinterpret_cast<uintptr_t>(data));
    d.cuptiDomainId = cupti_domain;
    return d;
  }
  CUpti_ActivityMemory4& memory(CUpti_ActivityMemoryOperationType op, uint32_t device, uint64_t address, uint64_t bytes,
                                uint64_t ts) {
    auto& m = add(memory_, CUPTI_ACTIVITY_KIND_MEMORY2);
    m.memoryOperationType = op;
    m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.deviceId = device;
    m.address = address;
    m.bytes = bytes;
    m.timestamp = ts;
    return m;
  }
  CUpti_ActivityExternalCorrelation& external(CUpti_ExternalCorrelationKind kind, uint64_t id, uint32_t corr) {
    auto& e = add(externals_, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
    e.externalKind = kind;
    e.externalId = id;
    e.correlationId = corr;
    return e;
  }
  CUpti_ActivitySynchronization2& sync(CUpti_ActivitySynchronizationType type, uint32_t ctx, uint32_t stream,
                                       uint32_t corr, uint64_t start, uint64_t end) {
    auto& s = add(syncs_, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
    s.type = type;
    s.contextId = ctx;
    s.streamId = stream;
    s.correlationId = corr;
    s.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
    s.start = start;
    s.end = end;
    return s;
  }
  CUpti_ActivityOverhead3& overhead(CUpti_ActivityOverheadKind kind, uint32_t thread, uint64_t start, uint64_t end) {
    auto& o = add(overheads_, CUPTI_ACTIVITY_KIND_OVERHEAD);
    o.overheadKind = kind;
    o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    o.objectId.pt.threadId = thread;
    o.start = start;
    o.end = end;
    return o;
  }

  // The records laid out one after another as in a CUPTI activity buffer (each struct is 8-byte aligned).
  std::vector<uint64_t> pack() const {
    size_t bytes = 0;
    for (size_t n : sizes_) bytes += n;
    std::vector<uint64_t> buffer(bytes / 8 + 1, 0);
    auto* at = reinterpret_cast<uint8_t*>(buffer.data());
    for (size_t i = 0; i < order_.size(); ++i) {
      std::memcpy(at, order_[i], sizes_[i]);
      at += sizes_[i];
    }
    return buffer;
  }
  size_t packed_bytes() const {
    size_t bytes = 0;
    for (size_t n : sizes_) bytes += n;
    return bytes;
  }

  // The records in the order they were added (or reversed, to show order does not matter).
  std::vector<const CUpti_Activity*> batch(bool reversed = false) const {
    std::vector<const CUpti_Activity*> out(order_.begin(), order_.end());
    if (reversed) std::reverse(out.begin(), out.end());
    return out;
  }

 private:
  template <typename T>
  T& add(std::deque<T>& store, CUpti_ActivityKind kind) {
    T& r = store.emplace_back();  // value-initialized: all zero
    r.kind = kind;
    order_.push_back(reinterpret_cast<const CUpti_Activity*>(&r));
    sizes_.push_back(sizeof(T));
    return r;
  }
  // deques: records keep their addresses as more are added.
  std::deque<CUpti_ActivityKernel10> kernels_;
  std::deque<CUpti_ActivityMemcpy6> memcpys_;
  std::deque<CUpti_ActivityMemset4> memsets_;
  std::deque<CUpti_ActivityAPI> apis_;
  std::deque<CUpti_ActivityMarker2> markers_;
  std::deque<CUpti_ActivityMarkerData2> marker_data_;
  std::deque<CUpti_ActivityMemory4> memory_;
  std::deque<CUpti_ActivityExternalCorrelation> externals_;
  std::deque<CUpti_ActivitySynchronization2> syncs_;
  std::deque<CUpti_ActivityOverhead3> overheads_;
  std::vector<const CUpti_Activity*> order_;
  std::vector<size_t> sizes_;
};

// The processor's events, one line each, so a mismatch shows which event and which field.
inline std::string dump(const std::vector<trace::Event>& events) {
  std::string out;
  for (const trace::Event& e : events) {
    trace::append_event(out, e);
    out += "\n";
  }
  return out;
}

}  // namespace shardscope::test
