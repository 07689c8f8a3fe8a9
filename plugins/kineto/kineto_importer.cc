#include "plugins/kineto/kineto_importer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <span>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/steps.h"
#include "model/classify.h"
#include "plugins/kineto/event_chunks.h"
#include "plugins/common/fsdp_labels.h"
#include "plugins/common/text_window.h"
#include "plugins/kineto/json_scan.h"
#include "plugins/kineto/kineto_keys.h"
#include "tracer/format/error.h"
#include "tracer/format/keys.h"
#include "tracer/format/limits.h"
#include "tracer/format/parse_progress.h"
#include "tracer/format/serialize.h"

namespace shardscope::plugins {
namespace {

namespace kk = kineto_keys;
using model::CollectiveKind;
using model::IntervalClass;

// Gloo's own ranges ("gloo:all_reduce"), which PyTorch records on Gloo's worker threads.
constexpr std::string_view kGlooPrefix = "gloo:";
constexpr std::string_view kAtenPrefix = "aten::";
// Where the numbers of string pids start (pid_of).
constexpr int64_t kStringPidBase = int64_t(1) << 30;

bool is_device_category(std::string_view cat) {
  return cat == kk::kCatKernel || cat == "Kernel" || cat == kk::kCatMemcpy || cat == kk::kCatMemset ||
         cat == kk::kCatCudaSync || cat == kk::kCatMtiaCcp;
}

std::optional<int64_t> profiler_step_number(std::string_view name) {
  // HTA's ProfilerStep\s*#\s*(\d+)
  if (name.substr(0, 12) != kk::kProfilerStepPrefix) return std::nullopt;
  size_t i = 12;
  while (i < name.size() && name[i] == ' ') ++i;
  if (i >= name.size() || name[i] != '#') return std::nullopt;
  ++i;
  while (i < name.size() && name[i] == ' ') ++i;
  int64_t n = 0;
  auto [p, ec] = std::from_chars(name.data() + i, name.data() + name.size(), n);
  if (ec != std::errc() || p == name.data() + i) return std::nullopt;
  return n;
}

// Whole µs down and up, for any ns: no negation (−INT64_MIN would overflow).
int64_t floor_us(int64_t ns) { return ns / 1000 - ((ns % 1000 != 0) && ns < 0); }
int64_t ceil_us(int64_t ns) { return ns / 1000 + ((ns % 1000 != 0) && ns > 0); }

// pid and tid come from the trace as any int64: mixed in unsigned arithmetic, where wrapping is defined.
struct PairHash {
  size_t operator()(const std::pair<int64_t, int64_t>& p) const {
    return std::hash<uint64_t>()(uint64_t(p.first) * 1000003u ^ uint64_t(p.second));
  }
};

class Builder {
 public:
  explicit Builder(bool keep_args) {
    if (keep_args) args_.emplace(rank_.strings);
  }
  // Room for the events a text of this size holds at most about (Kineto's are a few hundred bytes each; more
  // grow the arrays as before): address space costs no memory until it is used, and this spares the copies
  // and the fresh pages of each doubling.
  void reserve_for(size_t text_bytes) {
    const size_t n = text_bytes / 160;
    events_.reserve(n), track_of_.reserve(n);
  }
  // The file is the JSON Array Format, whose pids may be strings (the legacy profiler's "CPU functions").
  void set_bare_array() { bare_ = true; }
  // baseTimeNanoseconds, added to every time read from here on.
  void set_base(int64_t base_ns) { base_ = base_ns; }

  // False when the event's times leave the int64 nanosecond range (ts + baseTimeNanoseconds, or ts + dur):
  // an error, never a wrapped time. INT64_MIN itself is out of range too: it is model::kUnknown, and a launch
  // at that time would read as no launch.
  // Events of a phase the rank does not keep, counted where they were parsed (flows, counters...).
  void add_skipped(uint64_t n) { skip(n); }

  bool add(const Fields& f, std::span<const RawArg> raw) {
    raw_ = raw;
    if (!phase_read(f.ph)) return skip(), true;
    char ph = f.ph[0];
    const std::optional<int64_t> pid = pid_of(f);
    if (ph == 'M') return meta(f, pid), true;
    if (!pid || !f.tid_ok || !f.ts) return skip(), true;  // "Spans", "Traces", the "Record Window End" marker
    int64_t ts = 0, end = 0;
    if (__builtin_add_overflow(*f.ts, base_, &ts) || ts == model::kUnknown) return false;
    if (ph != 'X') return instant(f, *pid, ts), true;
    if (!f.dur || *f.dur < 0) return skip(), true;
    if (__builtin_add_overflow(ts, *f.dur, &end)) return false;
    bool device = f.has_stream && f.stream != -1 && is_device_category(f.cat);
    model::Event e;
    e.ts_ns = ts;
    e.dur_ns = *f.dur;
    e.name = rank_.strings.intern(f.name);
    e.cat = rank_.strings.intern(f.cat);
    uint32_t track = track_for(*pid, f.tid, device);
    if (device) {
      const NameClass& nc = name_class(e.name, f.name);
      e.cls = nc.device;
      if (e.cls == IntervalClass::Memory && f.bytes >= 0) e.bytes = f.bytes;
      if (e.cls == IntervalClass::Communication) {
        CollArgs a = coll_args(f);
        e.coll = a.kind != CollectiveKind::None ? a.kind : nc.kernel_coll;
        e.bytes = a.bytes;
        e.group_size = a.group;
        e.seq = a.seq;
        e.group = a.pg;
      }
      device_refs_.push_back({uint32_t(events_.size()), f.correlation, f.ext, !f.coll_name.empty()});
    } else {
      if (f.correlation >= 0 && (f.cat == kk::kCatCudaRuntime || f.cat == kk::kCatCudaDriver))
        launch_[f.correlation] = {ts, track};
      if (f.ext >= 0) {
        if (f.name == kk::kRecordParamComms && !f.coll_name.empty()) {
          comm_by_ext_[f.ext] = coll_args(f);
          count_dtype(comm_by_ext_[f.ext].kind, f.dtype);
        } else if (CollectiveKind k = name_class(e.name, f.name).launching_op; k != CollectiveKind::None)
          comm_by_ext_[f.ext] = op_args(f, k);
      }
      if (is_all_to_all_op(f, e.name)) all_to_all_.push_back({track, ts, end, coll_args(f)});
      if (f.cat != kk::kCatGpuUserAnnotation)
        if (auto n = profiler_step_number(f.name)) steps_.push_back({*n, ts, end});
      if (f.name.starts_with(kGlooPrefix)) gloo_.push_back(uint32_t(events_.size()));
    }
    events_.push_back(e);
    track_of_.push_back(track);
    keep_args(f);
    return true;
  }

  model::Rank finish(const nlohmann::json& dist, model::EventArgs* args) {
    apply_steps_and_launches();
    host_collectives();
    derive_fsdp_units(rank_, events_, track_of_, launches_);
    // What only the joins above read goes before the rank is laid out (about 100 MB of the 3 GB generated
    // file's peak).
    std::vector<Launch>().swap(launches_);
    decltype(launch_)().swap(launch_);
    decltype(comm_by_ext_)().swap(comm_by_ext_);
    decltype(device_refs_)().swap(device_refs_);
    decltype(all_to_all_)().swap(all_to_all_);
    decltype(gloo_)().swap(gloo_);
    distribute();
    if (dist.is_object()) {
      // Range-checked in read(): these fit an int.
      if (dist.contains(kk::kRank) && dist[kk::kRank].is_number_integer())
        rank_.rank = int(dist[kk::kRank].get<int64_t>());
      else
        rank_.rank = -1;
      if (dist.contains(kk::kWorldSize) && dist[kk::kWorldSize].is_number_integer())
        rank_.world_size = int(dist[kk::kWorldSize].get<int64_t>());
      nlohmann::json meta = dist;
      meta.erase("pg_config");
      rank_.metadata[kk::kDistributedInfo] = meta;
    } else {
      rank_.rank = -1;
    }
    if (skipped_) rank_.metadata["skipped_events"] = skipped_;
    if (!dtypes_.empty()) rank_.metadata[keys::kMetaCollectiveDtypes] = dtypes_;
    if (args_ && args) *args = args_->finalize(rank_);
    else
      rank_.finalize();
    return std::move(rank_);
  }

 private:
  struct CollArgs {
    CollectiveKind kind = CollectiveKind::None;
    int64_t bytes = model::kUnknown;
    int32_t group = 0;
    bool by_op = false;  // from a collective op's name, not from record_param_comms' args
    uint32_t seq = model::kNoSeq;
    model::StringId pg = 0;  // the process group's name
  };
  struct DeviceRef {
    uint32_t index;
    int64_t correlation, ext;
    bool has_coll_args;
  };
  struct HostStep {
    int64_t number, start, end;
  };
  struct LaunchCall {  // a runtime/driver call that launched device work, by its correlation id
    int64_t ts;
    uint32_t track;
  };
  struct HostRange {  // a host op on its thread's track, with the collective args it carries
    uint32_t track;
    int64_t start, end;
    CollArgs args;
  };

  void skip(uint64_t n = 1) { skipped_ += n; }

  // A host op that runs an all-to-all: c10d's or functional c10d's op, record_param_comms saying so, or
  // ProcessGroupNCCL's "nccl:all_to_all" range. NCCL runs an all-to-all as grouped sends and receives, so its
  // kernels are named SendRecv: the op around their launch names the collective.
  bool is_all_to_all_op(const Fields& f, model::StringId id) {
    if (f.cat == kk::kCatGpuUserAnnotation) return false;  // on the device's timeline, not around a launch
    if (name_class(id, f.name).launching_op == CollectiveKind::AllToAll) return true;
    if (f.name == kk::kRecordParamComms) return model::collective_from_op_name(f.coll_name) == CollectiveKind::AllToAll;
    return f.name.starts_with("nccl:") && model::collective_from_op_name(f.name) == CollectiveKind::AllToAll;
  }

  // A send/recv kernel (or one of no known kind) launched inside an all-to-all op is that all-to-all; its size
  // and group, where its own args do not say them, from the innermost such op that does (record_param_comms).
  void name_all_to_all(model::Event& e, const LaunchCall& launch) {
    if (e.cls != IntervalClass::Communication ||
        (e.coll != CollectiveKind::SendRecv && e.coll != CollectiveKind::Unknown && e.coll != CollectiveKind::None))
      return;
    auto it = std::upper_bound(all_to_all_.begin(), all_to_all_.end(), std::pair(launch.track, launch.ts),
                               [](std::pair<uint32_t, int64_t> at, const HostRange& r) {
                                 return at.first != r.track ? at.first < r.track : at.second < r.start;
                               });
    bool named = false;
    // Nested at most a few deep (c10d op > record_param_comms > nccl:all_to_all): a few ranges back suffice.
    for (int looked = 0; it != all_to_all_.begin() && looked < 16; ++looked) {
      const HostRange& r = *--it;
      if (r.track != launch.track) break;
      if (r.end < launch.ts) continue;
      if (!named) e.coll = CollectiveKind::AllToAll, named = true;
      if (e.bytes == model::kUnknown && r.args.bytes != model::kUnknown) e.bytes = r.args.bytes;
      if (e.group_size == 0 && r.args.group > 0) e.group_size = r.args.group;
    }
  }

  // What a name says, worked out once per distinct name: a trace repeats a few thousand kernel and op names
  // millions of times, and matching each against the collective patterns was a tenth of the parse.
  struct NameClass {
    bool known = false;
    IntervalClass device = IntervalClass::Compute;       // as a device event's name
    CollectiveKind kernel_coll = CollectiveKind::None;   // as a communication kernel's
    CollectiveKind launching_op = CollectiveKind::None;  // as a host op's
  };
  const NameClass& name_class(model::StringId id, std::string_view name) {
    if (id >= names_.size()) names_.resize(id + 1);
    NameClass& c = names_[id];
    if (!c.known) {
      c.known = true;
      c.device = model::classify_device_name(name);
      if (c.device == IntervalClass::Communication) c.kernel_coll = model::collective_from_kernel_name(name);
      c.launching_op = model::collective_from_launching_op(name);
    }
    return c;
  }

  // The args of the event just added, numbered by its place in events_ until distribute() deals it out.
  void keep_args(const Fields&) {
    if (!args_ || raw_.empty()) return;
    args_->begin(0, uint32_t(events_.size() - 1));
    for (const RawArg& a : raw_) switch (a.kind) {
        case model::ArgKind::Int: args_->add(a.key, a.i); break;
        case model::ArgKind::Double: args_->add(a.key, a.d); break;
        case model::ArgKind::Bool: args_->add(a.key, a.i != 0); break;
        case model::ArgKind::String: args_->add_string(a.key, a.text); break;
        case model::ArgKind::Json: args_->add_json(a.key, a.text); break;
      }
  }

  // How many collective ops of each kind named each dtype (keys.h kMetaCollectiveDtypes): few entries, so
  // a JSON object is kept as it is counted.
  void count_dtype(CollectiveKind kind, std::string_view dtype) {
    if (kind == CollectiveKind::None || kind == CollectiveKind::Unknown || dtype.empty() || dtype.size() > 64) return;
    nlohmann::json& n = dtypes_[std::string(model::to_string(kind))][std::string(dtype)];
    n = n.is_number_integer() ? n.get<int64_t>() + 1 : int64_t(1);
  }

  CollArgs coll_args(const Fields& f) {
    CollArgs a;
    // A sequence number beyond 32 bits (never seen) pairs by position instead.
    if (f.seq >= 0 && f.seq < int64_t(model::kNoSeq)) a.seq = uint32_t(f.seq);
    if (!f.pg_name.empty()) a.pg = rank_.strings.intern(f.pg_name);
    if (!f.coll_name.empty()) a.kind = model::collective_from_op_name(f.coll_name);
    // nccl-tests count all_gather by its output, everything else by its input.
    int64_t nelems = a.kind == CollectiveKind::AllGather ? f.out_nelems : f.in_nelems;
    int size = model::dtype_size(f.dtype);
    // A hostile element count may overflow the product: the bytes then stay unknown.
    if (int64_t bytes = 0; nelems >= 0 && size > 0 && !__builtin_mul_overflow(nelems, int64_t(size), &bytes))
      a.bytes = bytes;
    if (f.group > 0) a.group = int32_t(f.group);
    return a;
  }

  // A collective op's own args: its first input's size is the payload where nccl-tests counts the input
  // and the input is the whole of it (all-reduce, broadcast, reduce); otherwise the bytes stay unknown.
  static CollArgs op_args(const Fields& f, CollectiveKind kind) {
    CollArgs a;
    a.kind = kind;
    a.by_op = true;
    const bool input_sized =
        kind == CollectiveKind::AllReduce || kind == CollectiveKind::Broadcast || kind == CollectiveKind::Reduce;
    int size = model::dtype_size(f.op_in_type);
    if (int64_t bytes = 0;
        input_sized && f.op_in_numel >= 0 && size > 0 && !__builtin_mul_overflow(f.op_in_numel, int64_t(size), &bytes))
      a.bytes = bytes;
    return a;
  }

  uint32_t track_for(int64_t pid, int64_t tid, bool device) {
    if (last_track_ != UINT32_MAX && pid == last_pid_ && tid == last_tid_) {
      if (device) rank_.tracks[last_track_].kind = model::TrackKind::DeviceStream;
      return last_track_;
    }
    auto [it, fresh] = tracks_.try_emplace({pid, tid}, uint32_t(rank_.tracks.size()));
    if (fresh) rank_.tracks.push_back(model::Track{pid, tid, "", model::TrackKind::HostThread, {}});
    if (device) rank_.tracks[it->second].kind = model::TrackKind::DeviceStream;
    last_pid_ = pid, last_tid_ = tid, last_track_ = it->second;
    return it->second;
  }

  void instant(const Fields& f, int64_t pid, int64_t ts) {
    if (f.name == kk::kMemoryEvent) {
      if (f.device_type == kk::kDeviceTypeCuda && std::isfinite(f.total_allocated)) {
        memory_.push_back({ts, f.total_allocated});
        // The allocator's event itself, where the trace gives its size and a whole total (PyTorch always does).
        if (f.mem_bytes_ok && std::fabs(f.total_allocated) < 9e18 && f.device_id >= 0 && f.device_id <= INT32_MAX) {
          model::AllocatorEvent a;
          a.ts_ns = ts;
          a.bytes = f.mem_bytes;
          a.total_allocated = int64_t(f.total_allocated);
          a.total_reserved = f.total_reserved;
          a.addr = uint64_t(f.addr);
          a.device = int32_t(f.device_id);
          rank_.allocator.push_back(a);
          allocator_thread_.push_back({pid, f.tid});
        }
      }
      return;
    }
    model::Event e;
    e.ts_ns = ts;
    e.ph = 'i';
    e.flags = model::kInstant;
    e.name = rank_.strings.intern(f.name);
    e.cat = rank_.strings.intern(f.cat);
    uint32_t track = track_for(pid, f.tid, false);
    events_.push_back(e);
    track_of_.push_back(track);
    keep_args(f);
  }

  void meta(const Fields& f, std::optional<int64_t> pid) {
    if (!pid || f.meta_name.empty()) return;
    if (f.name == kk::kThreadName && f.tid_ok) thread_names_[{*pid, f.tid}] = std::string(f.meta_name);
    else if (f.name == kk::kProcessName)
      process_names_[*pid] = std::string(f.meta_name);
  }

  // The event's process: its integer pid, or in a bare array a string's own number, the same for equal
  // strings and named by the string. Past any real pid (Linux caps them at 2^22), so the two never meet.
  std::optional<int64_t> pid_of(const Fields& f) {
    if (f.pid_ok) return f.pid;
    if (!bare_ || f.pid_name.empty()) return std::nullopt;
    if (auto it = string_pids_.find(f.pid_name); it != string_pids_.end()) return it->second;
    uint32_t h = 2166136261u;  // FNV-1a: the number depends on the string alone, not on what came before
    for (char c : f.pid_name) h = (h ^ uint8_t(c)) * 16777619u;
    int64_t id = kStringPidBase + (h & 0x3fffffff);
    while (process_names_.contains(id)) ++id;  // another string's (2^-30 likely), or a process_name's
    string_pids_.emplace(std::string(f.pid_name), id);
    process_names_.emplace(id, std::string(f.pid_name));
    return id;
  }

  // A CPU-only rank's "gloo:all_reduce" ranges, on Gloo's worker threads, are its collectives' execution: its
  // communication, as the trainer's collective ranges on a CPU run are (the "c10d::allreduce_" op that queued
  // one stays host work, as a kernel's launch does). With device work, the device's kernels are that.
  void host_collectives() {
    if (!device_refs_.empty() || gloo_.empty()) return;
    for (uint32_t i : gloo_) {
      model::Event& e = events_[i];
      e.cls = IntervalClass::Communication;
      e.coll = model::collective_from_op_name(rank_.str(e.name).substr(kGlooPrefix.size()));
      rank_.tracks[track_of_[i]].kind = model::TrackKind::Communication;
    }
    // There the CPU computes too: its ATen ops, off Gloo's threads, are the compute the collectives may hide
    // behind (the ranges around them, a step or a module, are not work of their own).
    for (size_t i = 0; i < events_.size(); ++i) {
      model::Event& e = events_[i];
      if (e.ph == 'X' && e.cls != IntervalClass::Communication &&
          rank_.tracks[track_of_[i]].kind != model::TrackKind::Communication &&
          rank_.str(e.name).starts_with(kAtenPrefix))
        e.cls = IntervalClass::Compute;
    }
  }

  void apply_steps_and_launches() {
    std::sort(all_to_all_.begin(), all_to_all_.end(), [](const HostRange& a, const HostRange& b) {
      return a.track != b.track ? a.track < b.track : a.start < b.start;
    });
    std::sort(steps_.begin(), steps_.end(), [](const HostStep& a, const HostStep& b) { return a.start < b.start; });
    steps_.erase(std::unique(steps_.begin(), steps_.end(),
                             [](const HostStep& a, const HostStep& b) { return a.number == b.number; }),
                 steps_.end());
    // HTA keeps, when there are two or more ProfilerSteps, only device events launched by a CPU event that
    // starts (in whole µs) no later than the last step ends; our HTA-compatible numbers do the same.
    bool hta_filter = steps_.size() >= 2;
    int64_t last_end_us = 0;
    if (hta_filter) {
      const HostStep& last = *std::max_element(steps_.begin(), steps_.end(),
                                               [](const HostStep& a, const HostStep& b) { return a.start < b.start; });
      last_end_us = floor_us(last.end);
    }
    struct Span {
      int64_t lo = INT64_MAX, hi = INT64_MIN;
    };
    std::vector<Span> spans(steps_.size());
    launches_.reserve(device_refs_.size());
    for (const DeviceRef& r : device_refs_) {
      model::Event& e = events_[r.index];
      // Kineto's correlation: the kernel's args.correlation is that of the runtime call that launched it.
      auto launch = r.correlation >= 0 ? launch_.find(r.correlation) : launch_.end();
      if (launch != launch_.end()) {
        e.issued_ns = launch->second.ts;
        launches_.push_back({r.index, launch->second.track});
      }
      if (hta_filter && (launch == launch_.end() || ceil_us(launch->second.ts) > last_end_us))
        e.flags |= model::kOutsideHtaWindow;
      if ((e.cls == IntervalClass::Communication || e.cls == IntervalClass::Compute) && !r.has_coll_args &&
          r.ext >= 0) {
        // Older traces carry the collective's arguments only on the record_param_comms op that launched it.
        // A kernel launched by a collective op of symmetric memory, functional c10d or vLLM is that
        // collective whatever its name (record_param_comms keeps to the kernels named as communication, as
        // HTA does, since it also wraps copies on some releases).
        if (auto c = comm_by_ext_.find(r.ext);
            c != comm_by_ext_.end() && (e.cls == IntervalClass::Communication || c->second.by_op)) {
          e.cls = IntervalClass::Communication;
          if (c->second.kind != CollectiveKind::None && c->second.kind != CollectiveKind::Unknown)
            e.coll = c->second.kind;
          e.bytes = c->second.bytes;
          e.group_size = c->second.group;
          e.seq = c->second.seq;
          e.group = c->second.pg;
        }
      }
      if (launch != launch_.end() && !all_to_all_.empty()) name_all_to_all(e, launch->second);
      if (e.cls == IntervalClass::Communication && r.has_coll_args && e.seq == model::kNoSeq && r.ext >= 0) {
        // The kernel names its collective but its sequence number is on the op that launched it.
        if (auto c = comm_by_ext_.find(r.ext); c != comm_by_ext_.end() && c->second.seq != model::kNoSeq) {
          e.seq = c->second.seq;
          if (!e.group) e.group = c->second.pg;
        }
      }
      if (e.issued_ns != model::kUnknown && !steps_.empty()) {
        auto it = std::upper_bound(steps_.begin(), steps_.end(), e.issued_ns,
                                   [](int64_t t, const HostStep& s) { return t < s.start; });
        if (it != steps_.begin() && e.issued_ns < std::prev(it)->end) {
          size_t i = size_t(std::prev(it) - steps_.begin());
          e.step = int32_t(i);
          spans[i].lo = std::min(spans[i].lo, e.ts_ns);
          spans[i].hi = std::max(spans[i].hi, e.end_ns());
        }
      }
    }
    std::vector<int64_t> lo(steps_.size()), hi(steps_.size());
    for (size_t i = 0; i < steps_.size(); ++i) {
      model::Step s;
      s.number = steps_[i].number;
      s.host_start_ns = steps_[i].start;
      s.host_end_ns = steps_[i].end;
      lo[i] = spans[i].lo, hi[i] = spans[i].hi;
      rank_.steps.push_back(s);
    }
    model::set_device_windows(rank_.steps, lo, hi);
    if (!rank_.steps.empty()) rank_.step_rule = model::StepRule::ProfilerStep;
    if (!memory_.empty()) rank_.counters.push_back({keys::kMemoryAllocatorTotal, std::move(memory_)});
  }

  // Moves the events, parsed in file order into one array, onto their tracks with exact reservations.
  void distribute() {
    std::vector<size_t> counts(rank_.tracks.size());
    for (uint32_t t : track_of_) ++counts[t];
    for (size_t t = 0; t < counts.size(); ++t) rank_.tracks[t].events.reserve(counts[t]);
    // Where each event goes (kept args follow their events): its track, its place there.
    std::vector<std::pair<uint32_t, uint32_t>> where(args_ ? events_.size() : 0);
    // The copied events' pages go back as the copy goes (a second copy of every event was a third of a big
    // file's peak); nothing reads them again before the arrays are freed.
    constexpr size_t kReleaseEvery = 1 << 16;
    for (size_t i = 0; i < events_.size(); ++i) {
      std::vector<model::Event>& on = rank_.tracks[track_of_[i]].events;
      if (args_) where[i] = {track_of_[i], uint32_t(on.size())};
      on.push_back(events_[i]);
      if ((i + 1) % kReleaseEvery == 0) {
        trace::discard_pages(reinterpret_cast<const char*>(events_.data()),
                             reinterpret_cast<const char*>(events_.data() + i + 1));
        trace::discard_pages(reinterpret_cast<const char*>(track_of_.data()),
                             reinterpret_cast<const char*>(track_of_.data() + i + 1));
      }
    }
    std::vector<model::Event>().swap(events_);
    std::vector<uint32_t>().swap(track_of_);
    for (model::Track& t : rank_.tracks) {
      if (auto n = thread_names_.find({t.pid, t.tid}); n != thread_names_.end()) t.name = n->second;
      else if (t.kind == model::TrackKind::DeviceStream)
        t.name = fmt::format("GPU {} stream {}", t.pid, t.tid);
      else
        t.name = fmt::format("thread {}", t.tid);
      if (auto p = process_names_.find(t.pid); p != process_names_.end() && t.kind != model::TrackKind::DeviceStream)
        t.name = p->second + " / " + t.name;
    }
    std::vector<uint32_t> order(rank_.tracks.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [this](uint32_t x, uint32_t y) {
      const model::Track &a = rank_.tracks[x], &b = rank_.tracks[y];
      return a.kind != b.kind ? a.kind > b.kind : (a.pid != b.pid ? a.pid < b.pid : a.tid < b.tid);
    });
    std::vector<model::Track> sorted;
    sorted.reserve(order.size());
    std::vector<uint32_t> now_at(order.size());
    for (uint32_t k = 0; k < order.size(); ++k) {
      sorted.push_back(std::move(rank_.tracks[order[k]]));
      now_at[order[k]] = k;
    }
    rank_.tracks = std::move(sorted);
    allocator_tracks();
    if (args_) {
      for (auto& w : where) w.first = now_at[w.first];
      args_->relocate(where);
    }
  }

  // Each allocator event's host thread, as its track once the tracks have their places (none: UINT32_MAX; a
  // thread that has only [memory] events gets no track of its own).
  void allocator_tracks() {
    std::unordered_map<std::pair<int64_t, int64_t>, uint32_t, PairHash> at;
    for (uint32_t i = 0; i < rank_.tracks.size(); ++i)
      if (rank_.tracks[i].kind == model::TrackKind::HostThread)
        at.emplace(std::pair{rank_.tracks[i].pid, rank_.tracks[i].tid}, i);
    for (size_t i = 0; i < rank_.allocator.size(); ++i)
      if (auto it = at.find(allocator_thread_[i]); it != at.end()) rank_.allocator[i].track = it->second;
    std::vector<std::pair<int64_t, int64_t>>().swap(allocator_thread_);
  }

  model::Rank rank_;
  std::optional<model::ArgsBuilder> args_;  // keeping args; refers to rank_'s strings
  int64_t base_ = 0;
  std::span<const RawArg> raw_;  // the args of the event being added
  std::vector<model::Event> events_;
  std::vector<uint32_t> track_of_;
  std::unordered_map<std::pair<int64_t, int64_t>, uint32_t, PairHash> tracks_;
  int64_t last_pid_ = 0, last_tid_ = 0;
  uint32_t last_track_ = UINT32_MAX;
  std::unordered_map<int64_t, LaunchCall> launch_;
  std::vector<Launch> launches_;  // device events whose launch call is in the trace, with its thread
  std::unordered_map<int64_t, CollArgs> comm_by_ext_;
  std::vector<NameClass> names_;  // by the name's StringId
  std::vector<DeviceRef> device_refs_;
  std::vector<HostStep> steps_;
  std::vector<model::CounterSample> memory_;
  std::vector<std::pair<int64_t, int64_t>> allocator_thread_;  // rank_.allocator[i]'s (pid, tid)
  std::map<std::pair<int64_t, int64_t>, std::string> thread_names_;
  std::map<int64_t, std::string> process_names_;
  uint64_t skipped_ = 0;
  nlohmann::json dtypes_ = nlohmann::json::object();  // count_dtype()
  bool bare_ = false;
  std::map<std::string, int64_t, std::less<>> string_pids_;
  std::vector<uint32_t> gloo_;         // the host events named "gloo:...", by their place in events_
  std::vector<HostRange> all_to_all_;  // the host ops that run an all-to-all (is_all_to_all_op)
};

}  // namespace

bool KinetoImporter::can_read(std::string_view head) const {
  if (head.starts_with("\xEF\xBB\xBF")) head.remove_prefix(3);  // a UTF-8 byte order mark
  size_t i = head.find_first_not_of(" \t\r\n");
  if (i == std::string_view::npos) return false;
  if (head[i] == '[') {
    // The JSON Array Format: a bare array of events, the first an object with a "ph" (the legacy profiler's).
    size_t j = head.find_first_not_of(" \t\r\n", i + 1);
    return j != std::string_view::npos && head[j] == '{' && head.find("\"ph\"", j) != std::string_view::npos;
  }
  if (head[i] != '{') return false;
  return head.find("\"traceEvents\"") != std::string_view::npos ||
         head.find("\"schemaVersion\"") != std::string_view::npos ||
         head.find("\"deviceProperties\"") != std::string_view::npos;
}

unsigned default_parse_threads() { return std::clamp(std::thread::hardware_concurrency(), 1u, kMaxParseThreads); }

namespace {

model::Rank parse_kineto(Input in, const KinetoParseOptions& options, model::EventArgs* args, TextWindow* window) {
  const std::string& name = in.path;
  ChunkText text{in.data, in.data + in.size, name, "traceEvents", window};
  ChunkOptions chunking{std::clamp(options.threads ? options.threads : default_parse_threads(), 1u, kMaxParseThreads),
                        options.chunk_bytes, options.batch_bytes, options.guess_batches};
  // The events are added as they are parsed, with the baseTimeNanoseconds seen before their array (Kineto
  // writes it first). A file that gives it only later is read again with the final one (a window's text
  // is read from the file again).
  std::optional<int64_t> forced_base;
  for (;;) {
    if (window && forced_base) window->rewind();
    Builder b(args != nullptr);
    b.reserve_for(in.size);
    std::exception_ptr pending;  // the first bad event: raised after the checks of the whole file's structure
    size_t events = 0;
    std::vector<int64_t> bases_used;
    auto base_of = [](std::string_view v, int64_t& out) {
      return std::from_chars(v.data(), v.data() + v.size(), out).ec == std::errc();
    };
    TopLevel top = scan_top_level(
        in.text(), name,
        [&](const char* begin, const TopLevel& so_far) {
          if (window) text.end = in.data + window->size();  // a file that shrank as it was read ends sooner
          int64_t base = 0;
          for (auto [key, value] : so_far.members)
            if (key == kk::kBaseTimeNanoseconds && !base_of(value, base)) base = 0;
          bases_used.push_back(forced_base.value_or(base));
          b.set_base(bases_used.back());
          if (so_far.bare_array) b.set_bare_array();
          size_t skipped = 0;
          if (so_far.bare_array) text.array = "array";
          ArrayEnd end = parse_event_array(
              text, begin, chunking, args != nullptr, events, skipped,
              [&](const Fields& f, std::span<const RawArg> raw) { return b.add(f, raw); }, pending);
          b.add_skipped(skipped);
          return end;
        },
        window);
    // The text's size: a window reads (inflates) on to its end first, after which its text is gone.
    auto text_size = [&] {
      if (window) window->finish();
      return window ? window->size() : in.size;
    };
    if (!top.has_events) {
      if (top.truncated_at)
        throw trace::TraceError(name, *top.truncated_at,
                                "file cut off before its \"traceEvents\" array: nothing to load");
      throw trace::TraceError(name, text_size(),
                              "no \"traceEvents\" array: not a Chrome-trace / PyTorch profiler file");
    }
    // A top-level "shardscope" header past the head this importer was chosen by: a shardscope trace whose
    // events come first. `inspect` reads it as one; so does the loader, asked to read it again.
    if (std::any_of(top.members.begin(), top.members.end(),
                    [](const auto& m) { return m.first == "shardscope" && m.second.starts_with('{'); }))
      throw ReadAs("shardscope");
    int64_t base_ns = 0;
    nlohmann::json dist;
    for (auto [key, value] : top.members) {
      if (key == kk::kBaseTimeNanoseconds) {
        if (!base_of(value, base_ns))
          throw trace::TraceError(name, uint64_t(value.data() - in.data), "baseTimeNanoseconds is not an integer");
      } else if (key == kk::kDistributedInfo) {
        const uint64_t at = uint64_t(value.data() - in.data);
        if (nesting_depth(value) > trace::limits().max_depth)
          throw trace::TraceError(name, at,
                                  "distributedInfo nests objects and arrays deeper than " +
                                      std::to_string(trace::limits().max_depth) + " levels: refused");
        dist = nlohmann::json::parse(value, nullptr, false);
        if (dist.is_discarded()) throw trace::TraceError(name, at, "distributedInfo is not valid JSON");
        if (dist.is_object()) {
          auto check = [&](const char* key, int64_t lo) {
            auto it = dist.find(key);
            if (it == dist.end() || !it->is_number_integer()) return;
            bool ok = !(it->is_number_unsigned() && it->get<uint64_t>() > uint64_t(INT32_MAX)) &&
                      it->get<int64_t>() >= lo && it->get<int64_t>() <= INT32_MAX - 1;
            if (!ok)
              throw trace::TraceError(
                  name, at, fmt::format("distributedInfo.{} is {}: not an integer from {} up", key, it->dump(), lo));
          };
          check(kk::kRank, 0);
          check(kk::kWorldSize, 1);
        }
      }
    }
    if (std::any_of(bases_used.begin(), bases_used.end(), [&](int64_t u) { return u != base_ns; })) {
      forced_base = base_ns;
      continue;
    }
    if (pending) std::rethrow_exception(pending);
    const uint64_t size = text_size();
    in.release();  // the text is no longer needed: free it before the model's tracks are built
    model::Rank r = b.finish(dist, args);
    r.format = "kineto";
    r.source = name;
    // Kineto's times are already on the wall clock (unix time: baseTimeNanoseconds + ts, or absolute epoch
    // µs in older files): the identity pair says so, for comparing ranks across machines.
    // The JSON Array Format's (the legacy profiler's) count from the profiler's start: no wall clock.
    if (!top.bare_array) {
      r.clock_sync.push_back({0, 0});
    } else {
      r.metadata["chrome_trace_form"] = "JSON Array Format";
      r.warnings.push_back(
          fmt::format("{}: a bare array of events (the Chrome trace's JSON Array Format): its times "
                      "count from its profiler's start, so comparisons across ranks (stragglers, "
                      "wait %) hold only as far as the ranks' profilers started together",
                      name));
    }
    if (top.truncated_at) {
      r.truncated = true;
      r.warnings.push_back(fmt::format("{}: file cut off at byte {} of {}: read the {} whole events before the cut",
                                       name, *top.truncated_at, size, events));
    }
    return r;
  }
}

}  // namespace

model::Rank read_kineto(Input in, const KinetoParseOptions& options, model::EventArgs* args) {
  // A text the loader reads through a window: read on as the parse goes, given back behind it.
  TextWindow* window = text_window_of(in.data);
  const std::shared_ptr<const void> keep = window ? in.owner : nullptr;
  try {
    return parse_kineto(std::move(in), options, args, window);
  } catch (const trace::TraceError&) {
    // Corrupt gzip data (or more text than the limit) says so, as when the file was inflated whole before its
    // parse: what the parse met first may be the garbage it inflated to.
    if (window && window->gzip()) window->finish();
    throw;
  }
}

model::Rank KinetoImporter::read_rank(Input in, model::EventArgs* args, unsigned threads) const {
  return read_kineto(std::move(in), {.threads = threads}, args);
}

}  // namespace shardscope::plugins
