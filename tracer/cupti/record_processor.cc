#include "tracer/cupti/record_processor.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string_view>

#include "tracer/cupti/names.h"
#include "tracer/cupti/nccl.h"
#include "tracer/format/keys.h"

namespace shardscope::tracer::cupti {
namespace {

using json = nlohmann::json;

constexpr size_t kNcclRangesPerThread = 1024;

// CUPTI 13.0 writes a zero (or reversed) interval for some records, e.g. the first kernels after a
// timestamp-callback registration (pytorch/pytorch#192021): such an interval would sit at the clock's epoch.
bool bad_interval(uint64_t start, uint64_t end) { return start == 0 || end < start; }

uint32_t marker_thread(const CUpti_ActivityMarker2* m) {
  return m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? m->objectId.pt.threadId : 0;
}

// Whether an allocation record's source library (cuptiActivityEnableAllocationSource; null when off) is PyTorch's
// CUDA caching allocator, whose live cudaMalloc bytes are its reserved total.
bool from_caching_allocator(const char* source) {
  if (!source) return false;
  const std::string_view path(source);
  return path.substr(path.find_last_of('/') + 1).starts_with("libc10_cuda");
}

}  // namespace

RecordProcessor::RecordProcessor(ProcessorOptions options, std::function<uint32_t(const std::string&)> track)
    : opts_(options), decoder_(opts_.schemas), make_track_(std::move(track)) {}

uint32_t RecordProcessor::track(const std::string& name) {
  auto it = tracks_.find(name);
  if (it != tracks_.end()) return it->second;
  return tracks_.emplace(name, make_track_(name)).first->second;
}

uint32_t RecordProcessor::stream_track(uint32_t device, uint32_t stream) {
  uint64_t key = (uint64_t(device) << 32) | stream;
  auto it = stream_tracks_.find(key);
  if (it != stream_tracks_.end()) return it->second;
  return stream_tracks_.emplace(key, track(fill(keys::kGpuStreamTrack, device, stream))).first->second;
}

uint32_t RecordProcessor::thread_track(const char* pattern, uint32_t thread) {
  uint64_t key = (uint64_t(pattern == keys::kNvtxTrack) << 32) | thread;
  auto it = thread_tracks_.find(key);
  if (it != thread_tracks_.end()) return it->second;
  return thread_tracks_.emplace(key, track(fill(pattern, thread))).first->second;
}

const std::string& RecordProcessor::kernel_name(const char* mangled) {
  std::string key = mangled ? mangled : "";
  auto it = kernel_names_.find(key);
  if (it != kernel_names_.end()) return it->second;
  if (kernel_names_.size() >= (1u << 16)) kernel_names_.clear();  // a program generating kernels without end
  return kernel_names_.emplace(std::move(key), demangle(mangled)).first->second;
}

template <typename Map>
void RecordProcessor::remember(Map& map, std::deque<uint32_t>& order, uint32_t key) {
  order.push_back(key);
  while (order.size() > opts_.memory) {
    map.erase(order.front());
    order.pop_front();
  }
}

void RecordProcessor::process(std::span<const CUpti_Activity* const> records) {
  // Pass 1: index what other records refer to (external ids, marker payloads, context -> device) and sort
  // the rest by what emits them.
  std::vector<const CUpti_ActivityAPI*> apis;
  std::vector<const CUpti_ActivityMarker2*> markers;
  std::vector<const CUpti_Activity*> gpu;
  std::vector<const CUpti_ActivityMemory4*> memory;
  for (const CUpti_Activity* r : records) {
    ++stats_.records;
    switch (r->kind) {
      case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        auto* e = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(r);
        external_[e->correlationId] = {uint32_t(e->externalKind), e->externalId};
        remember(external_, external_order_, e->correlationId);
        break;
      }
      case CUPTI_ACTIVITY_KIND_MARKER_DATA: {
        auto* d = reinterpret_cast<const CUpti_ActivityMarkerData2*>(r);
        json args = json::object();
        json fields = json::object();
        // Zero is left out: CUPTI's record does not tell "no payload" from a zero payload.
        switch (d->payloadKind) {
          case CUPTI_METRIC_VALUE_KIND_DOUBLE:
            if (d->payload.metricValueDouble != 0) args[keys::kArgPayload] = d->payload.metricValueDouble;
            break;
          case CUPTI_METRIC_VALUE_KIND_UINT64:
            if (d->payload.metricValueUint64 != 0) args[keys::kArgPayload] = d->payload.metricValueUint64;
            break;
          case CUPTI_METRIC_VALUE_KIND_INT64:
            if (d->payload.metricValueInt64 != 0) args[keys::kArgPayload] = d->payload.metricValueInt64;
            break;
          case CUPTI_METRIC_VALUE_KIND_NVTX_EXTENDED_PAYLOAD:
            // Read now, whatever becomes of the marker: the decoder frees CUPTI's copy of the payload.
            fields = decoder_.decode(d->cuptiDomainId, reinterpret_cast<const nvtxPayloadData_v1*>(
                                                           uintptr_t(d->payload.metricValueNvtxExtendedPayload)));
            break;
          default: break;
        }
        if (d->flags & CUPTI_ACTIVITY_FLAG_MARKER_COLOR_ARGB) args[keys::kArgColor] = d->color;
        if (d->category != 0) args[keys::kArgCategory] = d->category;
        marker_data_[d->id] = {std::move(args), std::move(fields)};
        remember(marker_data_, marker_data_order_, d->id);
        break;
      }
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      case CUPTI_ACTIVITY_KIND_KERNEL: {
        auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(r);
        context_device_[k->contextId] = k->deviceId;
        gpu.push_back(r);
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(r);
        context_device_[m->contextId] = m->deviceId;
        gpu.push_back(r);
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(r);
        context_device_[m->contextId] = m->deviceId;
        gpu.push_back(r);
        break;
      }
      case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      case CUPTI_ACTIVITY_KIND_OVERHEAD: gpu.push_back(r); break;
      case CUPTI_ACTIVITY_KIND_RUNTIME:
      case CUPTI_ACTIVITY_KIND_DRIVER: apis.push_back(reinterpret_cast<const CUpti_ActivityAPI*>(r)); break;
      case CUPTI_ACTIVITY_KIND_MARKER: markers.push_back(reinterpret_cast<const CUpti_ActivityMarker2*>(r)); break;
      case CUPTI_ACTIVITY_KIND_MEMORY2: memory.push_back(reinterpret_cast<const CUpti_ActivityMemory4*>(r)); break;
      default: ++stats_.ignored; break;
    }
  }
  // Pass 2: launches first, so GPU work in the same batch links to them; NVTX ranges before kernels, so
  // NCCL kernels find the ranges they were launched in.
  for (const CUpti_ActivityAPI* a : apis) emit_api(a);
  emit_markers(markers);
  for (const CUpti_Activity* r : gpu) {
    switch (r->kind) {
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      case CUPTI_ACTIVITY_KIND_KERNEL: emit_kernel(reinterpret_cast<const CUpti_ActivityKernel10*>(r)); break;
      case CUPTI_ACTIVITY_KIND_MEMCPY: emit_memcpy(reinterpret_cast<const CUpti_ActivityMemcpy6*>(r)); break;
      case CUPTI_ACTIVITY_KIND_MEMSET: emit_memset(reinterpret_cast<const CUpti_ActivityMemset4*>(r)); break;
      case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
        emit_sync(reinterpret_cast<const CUpti_ActivitySynchronization2*>(r));
        break;
      case CUPTI_ACTIVITY_KIND_OVERHEAD: emit_overhead(reinterpret_cast<const CUpti_ActivityOverhead3*>(r)); break;
      default: break;
    }
  }
  emit_memory(memory);
}

void RecordProcessor::add_external(uint32_t correlation, json& args) const {
  auto it = external_.find(correlation);
  if (it == external_.end()) return;
  args[keys::kArgExternalKind] = it->second.first;
  args[keys::kArgExternalId] = it->second.second;
}

void RecordProcessor::emit_api(const CUpti_ActivityAPI* r) {
  if (bad_interval(r->start, r->end)) {
    ++stats_.bad_timestamps;
    return;
  }
  Launch launch{thread_track(keys::kCudaApiTrack, r->threadId), ts(r->start), r->threadId};
  json args = {{keys::kArgCorrelation, r->correlationId}};
  if (r->returnValue != 0) args[keys::kArgReturnValue] = r->returnValue;
  add_external(r->correlationId, args);
  bool driver = r->kind == CUPTI_ACTIVITY_KIND_DRIVER;
  push({'X', api_name(r->kind, r->cbid), driver ? keys::kCatCudaDriver : keys::kCatCudaRuntime, opts_.pid, launch.track,
        launch.start, int64_t(r->end - r->start), "", std::move(args)});
  launches_[r->correlationId] = launch;
  remember(launches_, launch_order_, r->correlationId);
  auto waiting = pending_.find(r->correlationId);
  if (waiting != pending_.end()) {
    for (const Pending& p : waiting->second) flow(launch, p.track, p.start);
    pending_.erase(waiting);
  }
}

void RecordProcessor::flow(const Launch& launch, uint32_t gpu_track, int64_t gpu_start) {
  std::string id = std::to_string(next_flow_++);
  push({'s', keys::kFlowLaunch, keys::kCatFlow, opts_.pid, launch.track, launch.start, 0, id, nullptr});
  push({'f', keys::kFlowLaunch, keys::kCatFlow, opts_.pid, gpu_track, gpu_start, 0, id, nullptr});
  ++stats_.flows;
}

void RecordProcessor::link(uint32_t correlation, uint32_t gpu_track, int64_t gpu_start) {
  if (correlation == 0) return;  // device-side launches have no host call
  auto it = launches_.find(correlation);
  if (it != launches_.end()) {
    flow(it->second, gpu_track, gpu_start);
    return;
  }
  pending_[correlation].push_back({gpu_track, gpu_start});
  remember(pending_, pending_order_, correlation);
}

void RecordProcessor::emit_markers(std::vector<const CUpti_ActivityMarker2*>& markers) {
  // A thread's START and END are in time order; pairing them needs that order, which buffers do not keep.
  std::stable_sort(markers.begin(), markers.end(), [](auto* a, auto* b) { return a->timestamp < b->timestamp; });
  for (const CUpti_ActivityMarker2* m : markers) {
    bool instant = m->flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS;
    bool start = m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START;
    bool end = m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END;
    if (instant || start) {
      if (!m->domain && !opts_.default_domain_markers) {
        marker_data_.erase(m->id);  // every Range of a linked program has one: do not keep them
        continue;
      }
      if (m->timestamp == 0) {
        ++stats_.bad_timestamps;
        continue;
      }
      std::string name = m->name ? m->name : "";
      std::string domain = m->domain ? m->domain : "";
      uint32_t thread = marker_thread(m);
      if (instant) {
        json args = json::object();
        if (!domain.empty()) args[keys::kArgDomain] = domain;
        auto d = marker_data_.find(m->id);
        if (d != marker_data_.end()) {
          args.update(d->second.args);
          marker_data_.erase(d);
        }
        push({'i', name, keys::kCatNvtx, opts_.pid, thread_track(keys::kNvtxTrack, thread), ts(m->timestamp), 0, "",
              std::move(args)});
        continue;
      }
      if (domain == "NCCL") {
        auto& ranges = nccl_ranges_[thread];
        ranges.push_back({name, ts(m->timestamp), INT64_MAX, m->id, nullptr});
        if (ranges.size() > kNcclRangesPerThread) ranges.pop_front();
      }
      open_markers_[m->id] = {std::move(name), std::move(domain), thread, ts(m->timestamp)};
      remember(open_markers_, open_marker_order_, m->id);  // ranges never ended must not pile up
    } else if (end) {
      auto it = open_markers_.find(m->id);
      if (it == open_markers_.end()) continue;  // a default-domain range we skip, or begun before tracing
      OpenMarker& o = it->second;
      int64_t stop = std::max(o.start, ts(m->timestamp));
      json args = json::object();
      if (!o.domain.empty()) args[keys::kArgDomain] = o.domain;
      json payload = nullptr;
      auto d = marker_data_.find(m->id);
      if (d != marker_data_.end()) {
        args.update(d->second.args);
        if (o.domain == "NCCL") payload = nccl_payload_args(d->second.fields, o.name);
        marker_data_.erase(d);
      }
      if (payload.is_object()) args.update(payload);
      if (o.domain == "NCCL") {
        auto& ranges = nccl_ranges_[o.thread];
        for (auto r = ranges.rbegin(); r != ranges.rend(); ++r)
          if (r->end == INT64_MAX && r->id == m->id && r->start == o.start && r->name == o.name) {
            r->end = stop;
            if (r->payload.is_null()) r->payload = std::move(payload);  // its MARKER_DATA is gone now
            break;
          }
      }
      push({'X', o.name, keys::kCatNvtx, opts_.pid, thread_track(keys::kNvtxTrack, o.thread), o.start, stop - o.start,
            "", std::move(args)});
      open_markers_.erase(it);
    }
  }
}

const json& RecordProcessor::range_payload(NvtxRange& range) {
  static const json kNone = json::object();
  if (range.payload.is_null()) {
    auto d = marker_data_.find(range.id);  // a MARKER_DATA that came after the range's START
    if (d == marker_data_.end()) return kNone;
    range.payload = nccl_payload_args(d->second.fields, range.name);
  }
  return range.payload;
}

void RecordProcessor::label_nccl(uint32_t correlation, std::string_view kernel, json& args) {
  std::string kind = nccl_kernel_collective(kernel);
  std::string op;
  size_t group_ops = 0;
  json payload = json::object();
  auto launch = launches_.find(correlation);
  if (launch != launches_.end()) {
    // NCCL's NVTX ranges are host ranges around the API call; the launch (cuLaunchKernelEx) happens inside
    // the collective's own range, or, for grouped calls, inside ncclGroupEnd after the collectives' ranges.
    int64_t t = launch->second.start;
    auto ranges = nccl_ranges_.find(launch->second.thread);
    if (ranges != nccl_ranges_.end()) {
      NvtxRange* inner = nullptr;
      const NvtxRange* group_start = nullptr;
      for (NvtxRange& r : ranges->second) {
        if (r.start > t) break;
        if (r.end >= t && (!inner || r.start >= inner->start)) inner = &r;
        if (r.name == "ncclGroupStart") group_start = &r;
      }
      if (inner && !nccl_range_collective(inner->name).empty()) {
        op = inner->name;
        group_ops = 1;
        payload = range_payload(*inner);
      } else if (group_start) {
        // A group launches once for all its collectives: name the kind only when they agree.
        std::string group_kind;
        bool mixed = false;
        for (NvtxRange& r : ranges->second) {
          if (r.start > t) break;
          std::string k = nccl_range_collective(r.name);
          if (r.start < group_start->start || k.empty()) continue;
          if (!group_kind.empty() && k != group_kind) mixed = true;
          group_kind = k;
          op = r.name;
          if (group_ops++ == 0) payload = range_payload(r);
          else
            merge_group_payload(payload, range_payload(r));
        }
        if (kind.empty() && !mixed) kind = group_kind;
        if (mixed) payload = json::object();  // bytes of different collectives do not add up
      }
    }
  }
  if (kind.empty() && group_ops == 1) kind = nccl_range_collective(op);
  if (!kind.empty()) args[keys::kArgCollective] = kind;
  if (!op.empty()) args[keys::kArgNcclOp] = op;
  if (group_ops > 1) args[keys::kArgNcclGroupOps] = group_ops;
  args.update(payload);
}

void RecordProcessor::emit_kernel(const CUpti_ActivityKernel10* r) {
  if (bad_interval(r->start, r->end)) {
    ++stats_.bad_timestamps;
    return;
  }
  const std::string& name = kernel_name(r->name);
  uint32_t tid = stream_track(r->deviceId, r->streamId);
  json args = {{keys::kArgDevice, r->deviceId},
               {keys::kArgStream, r->streamId},
               {keys::kArgCorrelation, r->correlationId},
               {keys::kArgGrid, {r->gridX, r->gridY, r->gridZ}},
               {keys::kArgBlock, {r->blockX, r->blockY, r->blockZ}},
               {keys::kArgRegistersPerThread, r->registersPerThread},
               {keys::kArgSharedMemory, int64_t(r->staticSharedMemory) + r->dynamicSharedMemory}};
  const char* cat = keys::kCatKernel;
  if (is_nccl_kernel(name)) {
    cat = keys::kCatComm;
    label_nccl(r->correlationId, name, args);
  }
  add_external(r->correlationId, args);
  push({'X', name, cat, opts_.pid, tid, ts(r->start), int64_t(r->end - r->start), "", std::move(args)});
  link(r->correlationId, tid, ts(r->start));
}

void RecordProcessor::emit_memcpy(const CUpti_ActivityMemcpy6* r) {
  if (bad_interval(r->start, r->end)) {
    ++stats_.bad_timestamps;
    return;
  }
  uint32_t tid = stream_track(r->deviceId, r->streamId);
  const char* kind = memcpy_kind_name(r->copyKind);
  json args = {{keys::kArgBytes, r->bytes},
               {keys::kArgCopyKind, kind},
               {keys::kArgDevice, r->deviceId},
               {keys::kArgStream, r->streamId},
               {keys::kArgCorrelation, r->correlationId}};
  add_external(r->correlationId, args);
  push({'X', std::string("Memcpy ") + kind, keys::kCatMemcpy, opts_.pid, tid, ts(r->start), int64_t(r->end - r->start),
        "", std::move(args)});
  link(r->correlationId, tid, ts(r->start));
}

void RecordProcessor::emit_memset(const CUpti_ActivityMemset4* r) {
  if (bad_interval(r->start, r->end)) {
    ++stats_.bad_timestamps;
    return;
  }
  uint32_t tid = stream_track(r->deviceId, r->streamId);
  json args = {{keys::kArgBytes, r->bytes},
               {keys::kArgMemsetValue, r->value},
               {keys::kArgDevice, r->deviceId},
               {keys::kArgStream, r->streamId},
               {keys::kArgCorrelation, r->correlationId}};
  add_external(r->correlationId, args);
  push(
      {'X', "Memset", keys::kCatMemset, opts_.pid, tid, ts(r->start), int64_t(r->end - r->start), "", std::move(args)});
  link(r->correlationId, tid, ts(r->start));
}

void RecordProcessor::emit_sync(const CUpti_ActivitySynchronization2* r) {
  if (bad_interval(r->start, r->end)) {
    ++stats_.bad_timestamps;
    return;
  }
  // The record names a context, not a device: the device comes from GPU work seen on that context.
  auto dev = context_device_.find(r->contextId);
  int64_t device = dev == context_device_.end() ? -1 : int64_t(dev->second);
  bool has_stream = r->streamId != CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  uint32_t tid = has_stream && device >= 0 ? stream_track(uint32_t(device), r->streamId)
                                           : track(fill(keys::kGpuSyncTrack, device));
  json args = {{keys::kArgContext, r->contextId}, {keys::kArgCorrelation, r->correlationId}};
  if (device >= 0) args[keys::kArgDevice] = device;
  if (has_stream) args[keys::kArgStream] = r->streamId;
  if (r->cudaEventId != CUPTI_SYNCHRONIZATION_INVALID_VALUE) args[keys::kArgCudaEvent] = r->cudaEventId;
  push({'X', sync_type_name(r->type), keys::kCatSync, opts_.pid, tid, ts(r->start), int64_t(r->end - r->start), "",
        std::move(args)});
  link(r->correlationId, tid, ts(r->start));
}

void RecordProcessor::emit_memory(std::vector<const CUpti_ActivityMemory4*>& records) {
  // The running total per device must follow time, which the batch does not.
  std::stable_sort(records.begin(), records.end(), [](auto* a, auto* b) { return a->timestamp < b->timestamp; });
  auto counter = [&](std::string name, int64_t t, int64_t value) {
    push({'C', std::move(name), keys::kCatCounter, opts_.pid, 0, t, 0, "", {{keys::kValue, value}}});
  };
  for (const CUpti_ActivityMemory4* r : records) {
    if (r->timestamp == 0) {
      ++stats_.bad_timestamps;
      continue;
    }
    auto& live = live_allocations_[r->deviceId];
    int64_t& total = allocated_[r->deviceId];
    bool reserve_moved = false;
    auto forget = [&](std::map<uint64_t, Live>::iterator it) {
      total -= it->second.bytes;
      if (it->second.caching_allocator) allocator_reserved_ -= it->second.bytes, reserve_moved = true;
      live.erase(it);
    };
    if (r->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION) {
      // The same address again without a free between means a free we did not see: replaced, not counted twice.
      if (auto old = live.find(r->address); old != live.end()) forget(old);
      const Live a{int64_t(r->bytes),
                   r->memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE && from_caching_allocator(r->source)};
      live.emplace(r->address, a);
      total += a.bytes;
      if (a.caching_allocator) allocator_reserved_ += a.bytes, reserve_moved = true;
    } else if (r->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE) {
      // A free of memory allocated before tracing began is unknown to us: it would drive the total negative.
      auto it = live.find(r->address);
      if (it == live.end()) {
        ++stats_.ignored;
        continue;
      }
      forget(it);
    } else {
      ++stats_.ignored;
      continue;
    }
    counter(fill(keys::kGpuMemoryCounter, r->deviceId), ts(r->timestamp), total);
    if (reserve_moved) counter(keys::kMemoryAllocatorReserved, ts(r->timestamp), allocator_reserved_);
  }
}

void RecordProcessor::emit_overhead(const CUpti_ActivityOverhead3* r) {
  if (bad_interval(r->start, r->end)) {
    ++stats_.bad_timestamps;
    return;
  }
  json args = json::object();
  if (r->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD || r->objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS)
    args[keys::kArgObject] = "thread " + std::to_string(r->objectId.pt.threadId);
  else if (r->objectKind == CUPTI_ACTIVITY_OBJECT_DEVICE)
    args[keys::kArgObject] = "device " + std::to_string(r->objectId.dcs.deviceId);
  push({'X', overhead_kind_name(r->overheadKind), keys::kCatOverhead, opts_.pid, track(keys::kCuptiOverheadTrack),
        ts(r->start), int64_t(r->end - r->start), "", std::move(args)});
}

void RecordProcessor::add_dropped(uint64_t n) {
  if (n == 0) return;
  stats_.dropped += n;
  push({'M', keys::kMetadataPatch, "", opts_.pid, 0, 0, 0, "", {{keys::kDroppedGpuRecords, stats_.dropped}}});
}

std::vector<trace::Event> RecordProcessor::take() {
  std::vector<trace::Event> out;
  out.swap(out_);
  return out;
}

}  // namespace shardscope::tracer::cupti
