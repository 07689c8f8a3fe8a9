#include "plugins/shardscope/shardscope_importer.h"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>

#include "model/classify.h"
#include "tracer/format/json_get.h"
#include "model/steps.h"
#include "plugins/common/gpu_join.h"
#include "tracer/format/keys.h"
#include "tracer/format/reader.h"

namespace shardscope::plugins {
namespace {

using model::IntervalClass;
using nlohmann::json;

int64_t arg_int(const json& args, const char* key, int64_t fallback) {
  if (!args.is_object()) return fallback;
  auto it = args.find(key);
  if (it == args.end() || !it->is_number()) return fallback;
  return trace::json_int64(args, key).value_or(fallback);
}

bool has_stream(const trace::Event& e) {
  return e.args.is_object() && e.args.contains(keys::kArgStream) && e.args[keys::kArgStream].is_number();
}

// GPU work recorded by the GPU tracer (tracer/cupti): kernels, copies, sets, and NCCL kernels (cat "comm", as
// the trainer's host collectives, but with a stream). A synchronization counts as device activity only when
// it is bound to a stream (a stream waiting on an event), as HTA counts Kineto's cuda_sync; a host thread
// blocked in cudaEventSynchronize is not the device being busy.
bool is_gpu_event(const trace::Event& e) {
  if (e.ph != 'X') return false;
  if (e.cat == keys::kCatKernel || e.cat == keys::kCatMemcpy || e.cat == keys::kCatMemset) return true;
  return (e.cat == keys::kCatSync || e.cat == keys::kCatComm) && has_stream(e);
}

// A (monotonic, realtime) pair as the tracer writes it, in the header's clock.sync and in each periodic
// shardscope_clock_sync metadata event.
std::optional<model::ClockPair> clock_pair(const json& o) {
  // Read as integers: a double loses nanoseconds on an epoch-sized realtime value.
  auto mono = trace::json_int64(o, keys::kMonotonicNs), real = trace::json_int64(o, keys::kRealtimeNs);
  if (!mono || !real) return std::nullopt;
  return model::ClockPair{*mono, *real};
}

// The id the trainer tagged a kernel with (CUPTI external correlation of its kind), else kUnknown.
void keep_args(model::ArgsBuilder& b, uint32_t track, uint32_t index, const json& args) {
  b.begin(track, index);
  for (auto it = args.begin(); it != args.end(); ++it) {
    const json& v = it.value();
    switch (v.type()) {
      case json::value_t::number_integer: b.add(it.key(), v.get<int64_t>()); break;
      case json::value_t::number_unsigned:
        if (v.get<uint64_t>() <= uint64_t(INT64_MAX)) b.add(it.key(), int64_t(v.get<uint64_t>()));
        else
          b.add(it.key(), v.get<double>());
        break;
      case json::value_t::number_float: b.add(it.key(), v.get<double>()); break;
      case json::value_t::boolean: b.add(it.key(), v.get<bool>()); break;
      case json::value_t::string: b.add_string(it.key(), v.get_ref<const std::string&>()); break;
      default: b.add_json(it.key(), v.dump()); break;
    }
  }
}

int64_t external_id(const json& args) {
  if (arg_int(args, keys::kArgExternalKind, -1) != keys::kExternalKindTrainerCollective) return model::kUnknown;
  return arg_int(args, keys::kArgExternalId, model::kUnknown);
}

bool is_launch(const trace::Event& e) {
  return e.ph == 'X' && (e.cat == keys::kCatCudaRuntime || e.cat == keys::kCatCudaDriver);
}

// What the file's header says of the rank, set once the events are in (the header may follow them, and
// metadata patches change it): number, run config, clock, warnings.
void apply_header(model::Rank& r, const trace::TraceFile& file, const std::string& path) {
  r.source = path;
  r.format = "shardscope";
  const json& h = file.shardscope;
  r.rank = int(trace::json_int_in(h, keys::kRank, 0, INT32_MAX - 1).value_or(-1));
  r.world_size = int(trace::json_int_in(h, keys::kWorldSize, 1, INT32_MAX).value_or(0));
  if (h.contains(keys::kRunConfig)) r.set_run_config(h[keys::kRunConfig]);
  for (const char* k : {keys::kHost, keys::kClock, keys::kTracer, keys::kDroppedRecords})
    if (h.contains(k)) r.metadata[k] = h[k];
  if (const json* clock = trace::json_field(h, keys::kClock))
    if (auto p = clock_pair(trace::json_field(*clock, keys::kClockSync) ? (*clock)[keys::kClockSync] : json()))
      r.clock_sync.push_back(*p);
  if (file.truncated)
    r.warnings.push_back(fmt::format("{}: file cut off at byte {} ({}): read the {} whole events before the cut", path,
                                     file.truncated->offset, file.truncated->detail, file.event_count));
  if (int64_t dropped = trace::json_int64(h, keys::kDroppedRecords).value_or(0); dropped > 0)
    r.warnings.push_back(fmt::format("{}: the tracer dropped {} records (its buffers were full)", path, dropped));
  r.truncated = file.truncated.has_value();
}

// What the events' pass gathers beside the rank: the host ranges to join to the device work they launched, the
// steps, and when each CUDA call was made (a kernel's issue time). The events come one at a time as the file
// is read, so what depends on the whole file (whether it has GPU work, a launch after its kernel) is settled
// after the last one.
struct Gathered {
  bool has_gpu = false;
  gpu_join::Input join;  // what the join of host ranges to device work needs (used when has_gpu)
  std::vector<model::Step> steps;
  std::unordered_map<int64_t, int64_t> launch_ts;              // CUDA API call correlation -> when it was called
  std::vector<std::pair<gpu_join::Ref, int64_t>> device_corr;  // device events, their correlation: issued_ns
  std::vector<gpu_join::Ref> comm, compute;                    // host ranges whose class waits for has_gpu

  // A complete ('X') event: its class, collective and size, its track's kind, and what the join needs of it.
  void complete(const trace::Event& te, model::Event& e, model::Track& t, uint32_t ti, gpu_join::Ref ref) {
    if (is_gpu_event(te)) {
      e.cls = model::classify_device_name(te.name);
      if (te.cat == keys::kCatComm) e.cls = IntervalClass::Communication;
      if (e.cls == IntervalClass::Communication) {
        auto c = te.args.find(keys::kArgCollective);
        e.coll = c != te.args.end() && c->is_string() ? model::collective_from_op_name(c->get<std::string>())
                                                      : model::collective_from_kernel_name(te.name);
        // NCCL's own size where it equals nccl-tests' bytes (all_reduce, ...: tracer/cupti writes it then);
        // the trainer's host collective, when joined below, says it for the others.
        e.bytes = arg_int(te.args, keys::kArgBytes, model::kUnknown);
      }
      has_gpu = true;
      t.kind = model::TrackKind::DeviceStream;
      int64_t corr = arg_int(te.args, keys::kArgCorrelation, -1);
      device_corr.push_back({ref, corr});
      if (corr >= 0)
        join.device.push_back(
            {ref, corr, external_id(te.args), arg_int(te.args, keys::kArgNcclMessageBytes, model::kUnknown)});
    } else if (is_launch(te)) {
      if (int64_t corr = arg_int(te.args, keys::kArgCorrelation, -1); corr >= 0) {
        launch_ts[corr] = te.ts_ns;
        join.api.push_back({ti, te.ts_ns, corr});
      }
    } else if (te.cat == keys::kCatComm) {
      // The trainer's collectives. On a GPU run the NCCL kernels are the device's communication and this
      // host range is only the trainer's view of it.
      e.coll = model::collective_from_op_name(te.name);
      e.bytes = arg_int(te.args, keys::kArgBytes, model::kUnknown);
      e.group_size = int32_t(arg_int(te.args, keys::kArgGroupSize, 0));
      e.issued_ns = arg_int(te.args, keys::kArgIssuedNs, model::kUnknown);
      e.cls = IntervalClass::Host;  // settle(): Communication on a CPU run, with its track
      comm.push_back(ref);
      join.comm.push_back(ref);
    } else if (te.cat == keys::kCatCompute || (te.cat == keys::kCatPhase && te.name == keys::kOptimizerPhase)) {
      // On a CPU run the compute thread is the device: each unit's forward/backward compute and the
      // optimizer step are its compute intervals (the forward/backward phase ranges also hold the waits).
      e.cls = IntervalClass::Host;  // settle(): Compute on a CPU run
      compute.push_back(ref);
      if (te.cat == keys::kCatCompute && e.unit >= 0 &&
          (te.name == keys::kUnitForward || te.name == keys::kUnitBackward))
        join.compute.push_back(ref);
    } else if (te.cat == keys::kCatStep && te.name == keys::kStepRange) {
      int64_t n = arg_int(te.args, keys::kArgStep, int64_t(steps.size()));
      steps.push_back({n, te.ts_ns, te.ts_ns + te.dur_ns, te.ts_ns, te.ts_ns + te.dur_ns,
                       te.args.is_object() && te.args.contains(keys::kArgAborted)});
    }
  }

  // After the last event: kernels' issue times from their launches wherever those fell, and on a CPU run
  // (no device work in the file) the trainer's collectives and compute as the device's.
  void settle(model::Rank& r) {
    auto at = [&r](gpu_join::Ref ref) -> model::Event& { return r.tracks[ref.track].events[ref.index]; };
    for (const auto& [ref, corr] : device_corr)
      if (auto l = launch_ts.find(corr); l != launch_ts.end()) at(ref).issued_ns = l->second;
    if (has_gpu) return;
    for (gpu_join::Ref ref : comm) {
      at(ref).cls = IntervalClass::Communication;
      r.tracks[ref.track].kind = model::TrackKind::Communication;
    }
    for (gpu_join::Ref ref : compute) at(ref).cls = IntervalClass::Compute;
  }
};

}  // namespace

// Whether "shardscope" is a key of the top-level object within `head`, wherever it falls among the others:
// the writer puts it first, but a file rewritten with sorted keys (jq -S, Python's sort_keys) has
// "displayTimeUnit" before it. Strings and nesting are followed; keys are compared as written (the writer
// never escapes this one).
bool ShardscopeImporter::can_read(std::string_view head) const {
  if (head.starts_with("\xEF\xBB\xBF")) head.remove_prefix(3);  // a UTF-8 byte order mark
  size_t i = head.find_first_not_of(" \t\r\n");
  if (i == std::string_view::npos || head[i] != '{') return false;
  int depth = 0;
  bool expect_key = false;
  for (; i < head.size(); ++i) {
    const char c = head[i];
    if (c == '"') {
      const size_t start = i + 1;
      for (++i; i < head.size() && head[i] != '"'; ++i)
        if (head[i] == '\\') ++i;
      if (i >= head.size()) return false;  // the head ends inside a string
      if (depth == 1 && expect_key && head.substr(start, i - start) == keys::kShardscope) {
        const size_t colon = head.find_first_not_of(" \t\r\n", i + 1);
        return colon != std::string_view::npos && head[colon] == ':';
      }
      expect_key = false;
    } else if (c == '{' || c == '[') {
      ++depth;
      expect_key = depth == 1;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) return false;
    } else if (c == ',') {
      expect_key = depth == 1;
    }
  }
  return false;
}

// The rank built from the events as the reader sends them (trace::EventSink): only the model's form of each
// event stays, never the whole file as trace::Events with JSON args (on the H100 trainer's ranks that was
// 55 MB a rank at the peak of an open, 420 bytes an event).
class RankBuilder {
 public:
  explicit RankBuilder(bool keep_args) {
    if (keep_args) kept.emplace(r.strings);
  }
  RankBuilder(const RankBuilder&) = delete;
  RankBuilder& operator=(const RankBuilder&) = delete;

  void add(trace::Event&& te) {
    if (te.ph == 'M') {
      if (te.name == keys::kClockSyncEvent)
        if (auto p = clock_pair(te.args)) clock_sync.push_back(*p);
      if (te.name == keys::kThreadName && te.args.is_object() && te.args.contains(keys::kName) &&
          te.args[keys::kName].is_string()) {
        names[te.tid] = te.args[keys::kName].get<std::string>();
        if (int64_t os = arg_int(te.args, keys::kOsTid, -1); os >= 0) g.join.os_tids.push_back({te.tid, os});
      }
      return;
    }
    if (te.ph == 'C') {
      double v = te.args.is_object() && te.args.contains(keys::kValue) && te.args[keys::kValue].is_number()
                     ? te.args[keys::kValue].get<double>()
                     : 0.0;
      auto [it, fresh] = counter_index.try_emplace(te.name, r.counters.size());
      if (fresh) r.counters.push_back({te.name, {}});
      r.counters[it->second].samples.push_back({te.ts_ns, v});
      return;
    }
    if (te.ph != 'X' && te.ph != 'i') return;
    model::Event e;
    e.ph = te.ph;
    e.ts_ns = te.ts_ns;
    e.dur_ns = te.ph == 'X' ? te.dur_ns : 0;
    if (te.ph == 'i') e.flags = model::kInstant;
    e.name = r.strings.intern(te.name);
    e.cat = r.strings.intern(te.cat);
    e.unit = int32_t(arg_int(te.args, keys::kArgUnit, -1));
    const uint32_t ti = track(te.tid);
    model::Track& t = r.tracks[ti];
    const gpu_join::Ref ref{ti, uint32_t(t.events.size())};
    if (te.ph == 'X') g.complete(te, e, t, ti, ref);
    if (kept && te.args.is_object() && !te.args.empty()) keep_args(*kept, ref.track, ref.index, te.args);
    t.events.push_back(e);
  }

  model::Rank r;
  Gathered g;
  std::optional<model::ArgsBuilder> kept;
  std::vector<model::ClockPair> clock_sync;  // the periodic ones, after the header's
  std::map<int64_t, std::string> names;

 private:
  uint32_t track(int64_t tid) {
    auto [it, fresh] = track_index.try_emplace(tid, r.tracks.size());
    if (fresh) r.tracks.push_back(model::Track{0, tid, "", model::TrackKind::HostThread, {}});  // pid: the rank
    return uint32_t(it->second);
  }
  std::map<int64_t, size_t> track_index;
  std::map<std::string, size_t> counter_index;
};

model::Rank ShardscopeImporter::read_rank(Input in, model::EventArgs* args) const {
  RankBuilder b(args != nullptr);
  trace::TraceFile file = trace::parse_trace(in.text(), in.path, [&b](trace::Event&& te) { b.add(std::move(te)); });
  in.release();
  model::Rank& r = b.r;
  apply_header(r, file, in.path);
  r.clock_sync.insert(r.clock_sync.end(), b.clock_sync.begin(), b.clock_sync.end());
  b.g.settle(r);
  Gathered& g = b.g;
  std::map<int64_t, std::string>& names = b.names;
  for (model::Track& t : r.tracks) t.pid = r.rank;
  for (model::Track& t : r.tracks) {
    auto n = names.find(t.tid);
    t.name = n != names.end() ? n->second : fmt::format("track {}", t.tid);
  }
  if (g.has_gpu) gpu_join::join(r, g.join);  // before steps: a joined kernel's issue time is the host's
  // Device work belongs to the step that launched it; on a GPU a step's window is its device time.
  model::set_steps(r, std::move(g.steps), g.has_gpu);
  if (!r.steps.empty()) r.step_rule = model::StepRule::TrainerStep;
  std::sort(r.clock_sync.begin(), r.clock_sync.end(),
            [](const model::ClockPair& a, const model::ClockPair& b) { return a.trace_ns < b.trace_ns; });
  if (b.kept) *args = b.kept->finalize(r);
  else
    r.finalize();
  return std::move(r);  // b's: the args builder above held its string table
}

}  // namespace shardscope::plugins
