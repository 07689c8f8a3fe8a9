// The host tracer: scoped ranges, instant events, counters and metadata, recorded into per-thread buffers
// without a lock and written by a background thread to one trace file per rank (see tracer/format/).
//
//   shardscope::tracer::start({.path = "trace.rank0.json.gz", .rank = 0, .world_size = 2});
//   { shardscope::tracer::Range r("forward"); ... }
//   shardscope::tracer::counter("memory.sharded_params", bytes);
//   shardscope::tracer::stop();
//
// Names, categories and argument keys are `const char*` that must outlive the process's tracing: string
// literals, or intern() for names built at run time. Built with CUDA, each Range is also an NVTX range (its
// first integer argument as the payload).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tracer/format/event.h"

#include "tracer/host/clock.h"
#include "tracer/host/nvtx.h"
#include "tracer/host/record.h"
#include "tracer/host/thread_buffer.h"

namespace shardscope::tracer {

struct Options {
  std::filesystem::path path;  // ".json", or ".json.gz" for gzip
  int rank = 0;
  int world_size = 1;
  std::chrono::milliseconds flush_interval{100};  // a SIGKILL loses at most about this much
  nlohmann::json run_config = nlohmann::json::object();
  std::string process_name;  // shown by trace viewers; default "rank N"
};

// Starts the session. Throws std::runtime_error if one is running or the file cannot be created.
void start(const Options& options);
// Writes everything recorded and closes the file. Safe to call when not running. Also runs at exit.
void stop();
bool running();
// Writes everything recorded so far now, from the calling thread (e.g. at the end of a step).
void flush();
// Records dropped so far because a thread's buffer was full (as of the last flush; also in the file).
uint64_t dropped_records();

namespace detail {
extern std::atomic<bool> g_on;
extern std::atomic<uint64_t> g_generation;
extern thread_local ThreadBuffer* t_buffer;
extern thread_local uint64_t t_generation;
ThreadBuffer* register_thread();

inline ThreadBuffer* local_buffer() {
  if (t_generation != g_generation.load(std::memory_order_relaxed)) [[unlikely]]
    return register_thread();
  return t_buffer;
}
void record(const char* name, const char* cat, Record::Kind kind, int64_t ts, int64_t dur, uint32_t track,
            bool ns_times, std::initializer_list<Arg> args);
}  // namespace detail

inline bool enabled() { return detail::g_on.load(std::memory_order_relaxed); }

// A copy of `s` that lives until the process exits (the same pointer for equal strings).
const char* intern(std::string_view s);
// A named track (a tid in the file) for events recorded on behalf of another timeline, e.g. a stream.
uint32_t track(std::string_view name);
// The calling thread's own track, for complete() to record on its behalf from another thread (0: none).
uint32_t this_thread_track();
// Names the calling thread's track, e.g. "compute" or "comm: all-gather".
void name_this_thread(std::string_view name);

// A scoped range: one complete ("X") event from construction to destruction.
class Range {
 public:
  explicit Range(const char* name, const char* cat = "range") noexcept : name_(name), cat_(cat) {
    if (enabled()) [[unlikely]]
      begin();
  }
  Range(const char* name, std::initializer_list<Arg> args, const char* cat = "range") noexcept
      : name_(name), cat_(cat) {
    if (enabled()) [[unlikely]] {
      for (const Arg& a : args)
        if (nargs_ < kMaxArgs) args_[nargs_++] = a;
      begin();
    }
  }
  ~Range() {
    if (start_ >= 0) [[unlikely]]
      end();
  }
  // An argument known only before the range ends (e.g. why it ended early); dropped past kMaxArgs.
  void add(const Arg& a) noexcept {
    if (start_ >= 0 && nargs_ < kMaxArgs) args_[nargs_++] = a;
  }
  Range(const Range&) = delete;
  Range& operator=(const Range&) = delete;

 private:
  void begin() noexcept {
    // The first integer argument rides along as the NVTX payload (tracer/host/nvtx.h).
    const Arg* payload = nullptr;
    for (uint8_t i = 0; i < nargs_ && !payload; ++i)
      if (args_[i].kind == Arg::Kind::Int) payload = &args_[i];
    if (payload) nvtx_push(name_, payload->i);
    else
      nvtx_push(name_);
    start_ = stamp();
  }
  void end() noexcept {
    int64_t stop = stamp();
    nvtx_pop();
    if (!enabled()) return;
    ThreadBuffer* b = detail::local_buffer();
    if (!b) return;
    Record* r = b->reserve();
    if (!r) return;
    r->ts = start_;
    r->dur = stop;
    r->name = name_;
    r->cat = cat_;
    r->track = 0;
    r->kind = Record::Kind::Complete;
    r->nargs = nargs_;
    r->ns_times = false;
    for (uint8_t i = 0; i < nargs_; ++i) r->args[i] = args_[i];
    b->commit();
  }

  const char* name_;
  const char* cat_;
  int64_t start_ = -1;
  uint8_t nargs_ = 0;
  Arg args_[kMaxArgs];
};

inline void instant(const char* name, std::initializer_list<Arg> args = {}, const char* cat = "instant") {
  if (enabled()) detail::record(name, cat, Record::Kind::Instant, stamp(), 0, 0, false, args);
}
inline void counter(const char* name, int64_t value) {
  if (enabled()) detail::record(name, "counter", Record::Kind::Counter, stamp(), value, 0, false, {});
}
void counter(const char* name, double value);
// A complete event with explicit times (CLOCK_MONOTONIC ns, see now_ns()) on a track made by track().
inline void complete(uint32_t track_id, const char* name, const char* cat, int64_t start_ns, int64_t end_ns,
                     std::initializer_list<Arg> args = {}) {
  // A reversed interval becomes an empty one: a file must never hold a negative duration.
  if (enabled())
    detail::record(name, cat, Record::Kind::Complete, start_ns, end_ns > start_ns ? end_ns - start_ns : 0, track_id,
                   true, args);
}
// Merged into the file's top-level "shardscope" object by readers (e.g. a run configuration known late).
void metadata(const nlohmann::json& patch);

// Finished events from another source (the CUPTI backend: GPU work, flows, counters with their own times),
// written at the next flush. The pid becomes the session's rank; tid is taken as given (from track()).
// Not for hot paths.
void emit(const std::vector<trace::Event>& events);

namespace detail {
// What a backend that feeds emit() needs from the session's lifecycle. on_flush runs before every periodic
// flush (on the flusher thread) and at the start of flush(); before_stop runs at the start of stop() while
// the session still takes events. Neither runs with a tracer lock held. Null members are skipped.
struct BackendHooks {
  void (*on_flush)() = nullptr;
  void (*before_stop)() = nullptr;
};
void set_backend_hooks(BackendHooks hooks);
}  // namespace detail

}  // namespace shardscope::tracer
