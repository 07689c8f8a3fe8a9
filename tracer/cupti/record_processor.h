// CUPTI activity records -> trace events. Pure: no CUPTI calls, no threads, no clock reads, so tests feed it
// records built in memory with the real CUPTI 13.0 structs. The backend (cupti_backend.cc) owns the CUPTI
// side and hands each batch of records here.
//
// CUPTI gives no order within or across buffers (a kernel may come before the API call that launched it),
// so each batch is read in two passes (index, then emit) and what one record waits for from another is kept
// across batches, bounded.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include <cupti.h>

#include "tracer/cupti/nvtx_payload.h"
#include "tracer/format/event.h"

namespace shardscope::tracer::cupti {

struct ProcessorOptions {
  int64_t pid = 0;  // the rank, as everywhere in the file
  // NVTX ranges in the default (unnamed) domain. Off when the program links the tracer: its own Ranges are
  // NVTX ranges too and are already on the thread's track. On under injection, where they are the user's.
  bool default_domain_markers = true;
  // How many launches, external ids and NCCL ranges per thread to remember for records still to come.
  size_t memory = 1 << 16;
  // Where NVTX extended payload schemas come from (cupti_schema_source() in the backend). Null: such
  // payloads (NCCL's message size, reduction op, ...) are not read.
  std::shared_ptr<SchemaSource> schemas;
};

class RecordProcessor {
 public:
  // track(name) gives the tid for a named track (tracer::track in the backend); called once per name.
  RecordProcessor(ProcessorOptions options, std::function<uint32_t(const std::string&)> track);

  // CUPTI's timestamps + offset = CLOCK_MONOTONIC ns (see gpu_clock.h). Applies to records processed later.
  void set_clock_offset(int64_t offset_ns) { offset_ = offset_ns; }

  // One batch: every record from the buffers completed since the last call, in any order.
  void process(std::span<const CUpti_Activity* const> records);

  // Records CUPTI reports it dropped (cuptiActivityGetNumDroppedRecords); the running total goes into the
  // header as keys::kDroppedGpuRecords.
  void add_dropped(uint64_t n);

  // The events produced since the last take().
  std::vector<trace::Event> take();

  struct Stats {
    uint64_t records = 0, ignored = 0, bad_timestamps = 0, dropped = 0, flows = 0;
  };
  const Stats& stats() const { return stats_; }
  // Entries kept for records still to come (launches, waiting GPU work, external ids, open markers, marker
  // payloads): bounded by ProcessorOptions::memory each, whatever the program does.
  size_t held() const {
    return launches_.size() + pending_.size() + external_.size() + open_markers_.size() + marker_data_.size();
  }

 private:
  struct Launch {  // a RUNTIME or DRIVER record, kept for the GPU work it launched
    uint32_t track;
    int64_t start;
    uint32_t thread;
  };
  struct Pending {  // GPU work whose launch has not been seen yet
    uint32_t track;
    int64_t start;
  };
  struct NvtxRange {  // an NCCL NVTX range, for labelling the kernels launched inside it
    std::string name;
    int64_t start, end;  // end = INT64_MAX while open
    uint32_t id;
    nlohmann::json payload;  // nccl_payload_args of its extended payload; null until its MARKER_DATA is seen
  };
  struct OpenMarker {
    std::string name, domain;
    uint32_t thread;
    int64_t start;
  };
  struct MarkerData {
    nlohmann::json args = nlohmann::json::object();
    nlohmann::json fields = nlohmann::json::object();  // the decoded extended payload, {entry name: value}
  };

  int64_t ts(uint64_t cupti_ns) const { return int64_t(cupti_ns) + offset_; }
  uint32_t track(const std::string& name);
  uint32_t stream_track(uint32_t device, uint32_t stream);
  uint32_t thread_track(const char* pattern, uint32_t thread);
  const std::string& kernel_name(const char* mangled);

  void index(const CUpti_Activity* r);
  void emit_api(const CUpti_ActivityAPI* r);
  void emit_markers(std::vector<const CUpti_ActivityMarker2*>& markers);
  void emit_kernel(const CUpti_ActivityKernel10* r);
  void emit_memcpy(const CUpti_ActivityMemcpy6* r);
  void emit_memset(const CUpti_ActivityMemset4* r);
  void emit_sync(const CUpti_ActivitySynchronization2* r);
  void emit_memory(std::vector<const CUpti_ActivityMemory4*>& records);
  void emit_overhead(const CUpti_ActivityOverhead3* r);
  // Links GPU work (correlation id, its track and start) to its launch with a flow, now or when it comes.
  void link(uint32_t correlation, uint32_t gpu_track, int64_t gpu_start);
  void flow(const Launch& launch, uint32_t gpu_track, int64_t gpu_start);
  void add_external(uint32_t correlation, nlohmann::json& args) const;
  void label_nccl(uint32_t correlation, std::string_view kernel, nlohmann::json& args);
  const nlohmann::json& range_payload(NvtxRange& range);
  void push(trace::Event e) { out_.push_back(std::move(e)); }
  template <typename Map>
  void remember(Map& map, std::deque<uint32_t>& order, uint32_t key);

  ProcessorOptions opts_;
  PayloadDecoder decoder_;
  std::function<uint32_t(const std::string&)> make_track_;
  int64_t offset_ = 0;
  std::unordered_map<std::string, uint32_t> tracks_;
  // Per-record lookups without building a track name or demangling each time (the flusher's hot loop).
  std::unordered_map<uint64_t, uint32_t> stream_tracks_;
  std::unordered_map<uint64_t, uint32_t> thread_tracks_;  // (pattern id, thread)
  std::unordered_map<std::string, std::string> kernel_names_;
  std::unordered_map<uint32_t, uint32_t> context_device_;  // learned from GPU records
  std::unordered_map<uint32_t, Launch> launches_;
  std::deque<uint32_t> launch_order_;
  std::unordered_map<uint32_t, std::vector<Pending>> pending_;
  std::deque<uint32_t> pending_order_;
  std::unordered_map<uint32_t, std::pair<uint32_t, uint64_t>> external_;  // correlation -> (kind, id)
  std::deque<uint32_t> external_order_;
  std::unordered_map<uint32_t, OpenMarker> open_markers_;  // by marker id
  std::unordered_map<uint32_t, MarkerData> marker_data_;   // by marker id
  std::deque<uint32_t> marker_data_order_, open_marker_order_;
  std::unordered_map<uint32_t, std::deque<NvtxRange>> nccl_ranges_;  // by thread, by start
  struct Live {
    int64_t bytes;
    bool caching_allocator;  // asked for by PyTorch's caching allocator (the record's source library)
  };
  std::map<uint32_t, std::map<uint64_t, Live>> live_allocations_;  // device -> address -> allocation
  std::map<uint32_t, int64_t> allocated_;                          // device -> bytes
  int64_t allocator_reserved_ = 0;  // the caching allocator's, every device's (one a process, as a rank has)
  uint64_t next_flow_ = 1;
  Stats stats_;
  std::vector<trace::Event> out_;
};

}  // namespace shardscope::tracer::cupti
