#include "plugins/nsys/nsys_rank.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "model/classify.h"
#include "plugins/nsys/nccl_link.h"
#include "plugins/nsys/nccl_ops.h"
#include "plugins/nsys/nsys_fsdp.h"
#include "plugins/nsys/nsys_keys.h"
#include "plugins/nsys/nsys_memory.h"
#include "plugins/nsys/nsys_payload.h"
#include "plugins/nsys/nsys_trainer.h"
#include "plugins/nsys/nvtx_schemas.h"
#include "plugins/nsys/process_rows.h"

namespace shardscope::nsys {
namespace k = nsys_keys;
using model::IntervalClass;

std::string_view base_nvtx_name(std::string_view text) {
  size_t cut = text.size();
  for (std::string_view marker : {", seq = ", ", op_id = ", ", sizes = ", ", input_op_ids = "})
    if (size_t at = text.find(marker); at != std::string_view::npos && at > 0) cut = std::min(cut, at);
  return text.substr(0, cut);
}

namespace {

// A CUDA call that may have launched GPU work, by its correlationId (unique within a process).
struct Call {
  int64_t corr, ts, tid;
};

class RankBuilder {
 public:
  RankBuilder(Export& x, ProcessScans& scans, const Process& p, bool file_warnings, model::EventArgs* args)
      : x_(x), scans_(scans), p_(p), file_warnings_(file_warnings), args_(args) {}

  model::Rank build() {
    thread_names();
    runtime();
    device(k::kKernel);
    device(k::kMemcpy);
    device(k::kMemset);
    device(k::kGraphTrace);
    sync();
    memory();
    nvtx();
    link();
    nccl_ops();
    name_all_to_all();
    group_sizes();
    finish();
    return std::move(r_);
  }

 private:
  // The process's rows of `table` (process_rows.h: one pass over the table for all of the file's ranks), by
  // its `id` column, read by `select`.
  ProcessRows& rows(const char* table, const char* id, const std::string& select) {
    return scans_.of(p_.key, select, table, id);
  }

  // The event's times on the trace clock (the session start added): false for times that do not fit.
  template <typename Q>
  bool times(Q& q, int c, model::Event& e) {
    const int64_t s = q.i64_or(c, model::kUnknown), end = q.i64_or(c + 1, model::kUnknown);
    int64_t ts = 0, te = 0, dur = 0;
    // A start near INT64_MIN and a small end do not fit one duration either (found by fuzz_nsys_grammar).
    if (s == model::kUnknown || end == model::kUnknown || end < s || __builtin_add_overflow(s, x_.base_ns, &ts) ||
        __builtin_add_overflow(end, x_.base_ns, &te) || ts == model::kUnknown || __builtin_sub_overflow(te, ts, &dur))
      return false;
    e.ts_ns = ts;
    e.dur_ns = dur;
    return true;
  }

  template <typename Q>
  model::StringId name_of(Q& q, int c) {
    const int64_t id = q.i64(c);
    if (id == 0 && q.null(c)) return 0;
    if (id == 0 && q.is_text(c)) return r_.strings.intern(q.text(c));  // older exports keep some names inline
    auto [it, fresh] = ids_.try_emplace(id, 0);
    if (fresh) it->second = r_.strings.intern(x_.str(id));
    return it->second;
  }

  uint32_t device_track(int64_t device, int64_t stream) {
    auto [it, fresh] = device_tracks_.try_emplace({device, stream}, uint32_t(r_.tracks.size()));
    if (fresh)
      r_.tracks.push_back(
          {device, stream, fmt::format("GPU {} stream {}", device, stream), model::TrackKind::DeviceStream, {}});
    return it->second;
  }
  uint32_t host_track(int64_t tid) {
    auto [it, fresh] = host_tracks_.try_emplace(tid, uint32_t(r_.tracks.size()));
    if (fresh) {
      auto n = thread_names_.find(tid);
      std::string name = n != thread_names_.end() && !n->second.empty() ? fmt::format("{} (thread {})", n->second, tid)
                                                                        : fmt::format("thread {}", tid);
      r_.tracks.push_back({p_.pid, tid, std::move(name), model::TrackKind::HostThread, {}});
    }
    return it->second;
  }

  void thread_names() {
    if (!x_.db.has_column(k::kThreadNames, k::kGlobalTid) || !x_.db.has_column(k::kThreadNames, k::kNameId)) return;
    ProcessRows& q =
        rows(k::kThreadNames, k::kGlobalTid, fmt::format("SELECT {}, {}", quoted(k::kGlobalTid), quoted(k::kNameId)));
    while (q.row()) thread_names_[q.i64(0) & k::kTidMask] = x_.str(q.i64(1));
  }

  void runtime() {
    const char* t = k::kRuntime;
    if (!x_.db.has_table(t)) return;
    ProcessRows& q =
        rows(t, k::kGlobalTid,
             fmt::format("SELECT {}, {}, {}, {}, {}", x_.column(t, k::kStart), x_.column(t, k::kEnd),
                         x_.column(t, k::kGlobalTid), x_.column(t, k::kCorrelationId), x_.column(t, k::kNameId)));
    const model::StringId runtime_cat = r_.strings.intern(k::kCatRuntime),
                          driver_cat = r_.strings.intern(k::kCatDriver);
    std::unordered_map<int64_t, std::pair<model::StringId, model::StringId>>
        names;  // nameId -> name without its _vNNNN, category
    while (q.row()) {
      model::Event e;
      if (!times(q, 0, e)) {
        ++skipped_;
        continue;
      }
      const int64_t tid = q.i64(2) & k::kTidMask;
      auto [it, fresh] = names.try_emplace(q.i64(4));
      if (fresh) {
        std::string_view n = x_.str(q.i64(4));
        // "cudaLaunchKernel_v7000": the API version suffix is not part of the name Kineto and users know.
        if (size_t v = n.rfind("_v"); v != std::string_view::npos && v + 2 < n.size() &&
                                      n.find_first_not_of("0123456789", v + 2) == std::string_view::npos)
          n = n.substr(0, v);
        it->second = {r_.strings.intern(n), n.starts_with("cuda") ? runtime_cat : driver_cat};
      }
      e.name = it->second.first;
      e.cat = it->second.second;
      if (int64_t corr = q.i64_or(3, model::kUnknown); corr != model::kUnknown) calls_.push_back({corr, e.ts_ns, tid});
      r_.tracks[host_track(tid)].events.push_back(e);
    }
    std::sort(calls_.begin(), calls_.end(), [](const Call& a, const Call& b) { return a.corr < b.corr; });
  }

  template <typename Q>
  const Call* call_of(Q& q, int c) {
    const int64_t corr = q.i64_or(c, model::kUnknown);
    if (corr == model::kUnknown) return nullptr;
    auto it = std::lower_bound(calls_.begin(), calls_.end(), corr, [](const Call& a, int64_t v) { return a.corr < v; });
    return it != calls_.end() && it->corr == corr ? &*it : nullptr;
  }

  // Kernels, copies, sets and graph launches: one row each on its stream's track.
  void device(const char* t) {
    if (!x_.db.has_table(t)) return;
    const bool kernel = t == std::string_view(k::kKernel), memcpy = t == std::string_view(k::kMemcpy),
               graph = t == std::string_view(k::kGraphTrace);
    std::string extra = kernel  ? fmt::format("{}, {}", x_.column(t, k::kDemangledName), x_.column(t, k::kShortName))
                        : graph ? fmt::format("{}, NULL", x_.column(t, k::kGraphId))
                                : fmt::format("{}, {}", x_.column(t, k::kBytes),
                                              memcpy ? x_.column(t, k::kCopyKind) : std::string("NULL"));
    ProcessRows& q = rows(
        t, k::kGlobalPid,
        fmt::format("SELECT {}, {}, {}, {}, {}, {}", x_.column(t, k::kStart), x_.column(t, k::kEnd),
                    x_.column(t, k::kDeviceId), x_.column(t, k::kStreamId), x_.column(t, k::kCorrelationId), extra));
    const model::StringId cat = r_.strings.intern(kernel   ? k::kCatKernel
                                                  : memcpy ? k::kCatMemcpy
                                                  : graph  ? k::kCatGraph
                                                           : k::kCatMemset);
    model::StringId memset_name = r_.strings.intern("Memset (Device)");
    std::unordered_map<model::StringId, std::pair<IntervalClass, model::CollectiveKind>> classes;
    while (q.row()) {
      model::Event e;
      if (!times(q, 0, e)) {
        ++skipped_;
        continue;
      }
      const int64_t device = q.i64(2), stream = q.i64(3);  // NULL reads 0
      stream_device_.try_emplace(stream, device);
      devices_.insert(device);
      e.cat = cat;
      if (kernel) {
        e.name = name_of(q, 5);
        if (r_.str(e.name).empty()) e.name = name_of(q, 6);
        auto [it, fresh] = classes.try_emplace(e.name);
        if (fresh) {
          std::string_view n = r_.str(e.name);
          it->second.first = model::classify_device_name(n);
          if (it->second.first == IntervalClass::Communication)
            it->second.second = model::collective_from_kernel_name(n);
        }
        e.cls = it->second.first;
        e.coll = it->second.second;
      } else if (graph) {
        // What ran inside is not recorded in graph-trace mode: compute (docs/spec.md says why).
        auto [it, fresh] = graph_names_.try_emplace(q.i64_or(5, model::kUnknown), 0);
        if (fresh)
          it->second = r_.strings.intern(it->first == model::kUnknown ? std::string(k::kGraphName)
                                                                      : fmt::format("{} {}", k::kGraphName, it->first));
        e.name = it->second;
        e.cls = IntervalClass::Compute;
        ++graph_launches_;
      } else {
        if (memcpy) {
          int64_t kind = q.null(6) ? 0 : q.i64(6);
          e.name = r_.strings.intern(fmt::format("Memcpy {}", kind >= 0 && kind < int64_t(std::size(k::kMemcpyKinds))
                                                                  ? k::kMemcpyKinds[kind]
                                                                  : "Unknown"));
        } else {
          e.name = memset_name;
        }
        e.cls = IntervalClass::Memory;
        if (!q.null(5) && q.i64(5) >= 0) e.bytes = q.i64(5);
      }
      const Call* call = call_of(q, 4);
      if (call) e.issued_ns = call->ts;
      uint32_t track = device_track(device, stream);
      if (call && e.cls == IntervalClass::Communication)
        nccl_.push_back({track, uint32_t(r_.tracks[track].events.size()), call->tid, call->ts});
      r_.tracks[track].events.push_back(e);
    }
  }

  // A synchronization is device time when it is bound to a stream (a stream waiting on an event), as Kineto's
  // cuda_sync is; on the stream's device, which its kernels tell better than the row's deviceId.
  void sync() {
    const char* t = k::kSync;
    if (!x_.db.has_table(t)) return;
    ProcessRows& q = rows(t, k::kGlobalPid,
                          fmt::format("SELECT {}, {}, {}, {}, {}, {}", x_.column(t, k::kStart), x_.column(t, k::kEnd),
                                      x_.column(t, k::kDeviceId), x_.column(t, k::kStreamId),
                                      x_.column(t, k::kCorrelationId), x_.column(t, k::kSyncType)));
    const model::StringId cat = r_.strings.intern(k::kCatSync);
    while (q.row()) {
      model::Event e;
      if (q.null(3) || q.i64(3) < 0 || q.i64(3) == 0xFFFFFFFF) continue;
      if (!times(q, 0, e)) {
        ++skipped_;
        continue;
      }
      const int64_t stream = q.i64(3);
      auto known = stream_device_.find(stream);
      // Exports give some synchronizations device 0 whatever the process's GPU: a stream of no kernel goes to
      // the process's one device where it has one.
      const int64_t device = known != stream_device_.end() ? known->second
                             : devices_.size() == 1        ? *devices_.begin()
                             : q.null(2)                   ? 0
                                                           : q.i64(2);
      int64_t type = q.null(5) ? 0 : q.i64(5);
      e.name = r_.strings.intern(type >= 0 && type < int64_t(std::size(k::kSyncNames)) ? k::kSyncNames[type]
                                                                                       : k::kSyncNames[0]);
      e.cat = cat;
      e.cls = model::classify_device_name(r_.str(e.name));
      const uint32_t track = device_track(device, stream);
      if (const Call* call = call_of(q, 4)) e.issued_ns = call->ts;
      r_.tracks[track].events.push_back(e);
    }
  }

  // CUDA's memory records, as the allocator events the measured memory reads; each by its CUDA call's thread.
  void memory() {
    const MemoryRecords m = read_memory(x_, scans_, p_.key, r_, [&](int64_t corr) {
      auto it =
          std::lower_bound(calls_.begin(), calls_.end(), corr, [](const Call& a, int64_t v) { return a.corr < v; });
      return it != calls_.end() && it->corr == corr ? host_track(it->tid) : UINT32_MAX;
    });
    if (!m.table) return;
    memory_meta_ = {{"records", m.read}};
    if (m.host) memory_meta_["host_records_left_out"] = m.host;
    if (const std::string w = memory_warning(x_.db.name(), m); !w.empty()) r_.warnings.push_back(w);
  }

  void nvtx() {
    const char* t = k::kNvtx;
    if (!x_.db.has_table(t)) return;
    for (const model::Track& tr : r_.tracks) split_.push_back(tr.events.size());
    const bool json = x_.db.has_column(t, k::kJsonText);
    has_int64_ = x_.db.has_column(t, k::kInt64Value);
    const bool binary = x_.db.has_column(t, k::kBinaryData);
    ProcessRows& q = rows(t, k::kGlobalTid,
                          fmt::format("SELECT {}, {}, {}, {}, {}, {}, {}, {}, {}, {}", x_.column(t, k::kStart),
                                      x_.column(t, k::kEnd), x_.column(t, k::kEventType), x_.column(t, k::kText),
                                      x_.column(t, k::kTextId), x_.column(t, k::kDomainId), x_.column(t, k::kGlobalTid),
                                      json ? quoted(k::kJsonText) : std::string("NULL"),
                                      has_int64_ ? quoted(k::kInt64Value) : std::string("NULL"),
                                      binary ? quoted(k::kBinaryData) : std::string("NULL")));
    const model::StringId cat = r_.strings.intern(k::kCatNvtx);
    std::map<int64_t, std::string> domains;
    struct InDomain {
      uint32_t track, index;
      int64_t domain;
    };
    std::vector<InDomain> in_domain;
    std::unordered_map<int64_t, model::StringId> text_ids;  // textId -> the interned base name
    while (q.row()) {
      const int64_t type = q.i64_or(2, -1);
      const int64_t domain = q.i64(5);  // NULL: the default domain, 0
      if (type == k::kNvtxDomainCreate) {
        domains[domain] = std::string(q.text(3).empty() ? std::string_view(x_.str(q.i64(4))) : q.text(3));
        continue;
      }
      const bool mark = type == k::kNvtxMark;
      const bool range = type == k::kNvtxPushPopRange || type == k::kNvtxStartEndRange ||
                         type == k::kNvtxtPushPopRange || type == k::kNvtxtStartEndRange;
      if (!mark && !range) continue;
      model::Event e;
      if (mark) {
        int64_t ts = 0;
        if (q.null(0) || __builtin_add_overflow(q.i64(0), x_.base_ns, &ts) || ts == model::kUnknown) {
          ++skipped_;
          continue;
        }
        e.ts_ns = ts, e.ph = 'i', e.flags = model::kInstant;
      } else if (!times(q, 0, e)) {
        ++(q.null(1) ? unended_ : skipped_);
        continue;
      }
      std::string_view text = q.text(3);
      if (text.data()) {  // NULL has no text pointer
        e.name = r_.strings.intern(base_nvtx_name(text));
      } else if (!q.null(4)) {
        auto [it, fresh] = text_ids.try_emplace(q.i64(4), 0);
        if (fresh) it->second = r_.strings.intern(base_nvtx_name(x_.str(q.i64(4))));
        e.name = it->second;
        text = x_.str(q.i64(4));
      }
      e.cat = cat;
      const int64_t tid = q.i64(6) & k::kTidMask;
      const uint32_t track = host_track(tid);
      if (domain != 0) in_domain.push_back({track, uint32_t(r_.tracks[track].events.size()), domain});
      else if (range && is_trainer_range(r_.str(e.name)))
        trainer_.ranges.push_back({track, uint32_t(r_.tracks[track].events.size()), q.i64_or(8, model::kUnknown)});
      if (range && text.starts_with("nccl")) {
        NcclRange n{tid, e.ts_ns, e.end_ns(), std::string(text), -1, 0};
        if (!q.null(7)) {
          NcclPayload pl = parse_payload(q.text(7));
          n.bytes = pl.bytes, n.nranks = pl.nranks, n.peer = pl.peer, n.comm = pl.comm;
        } else if (!q.null(9)) {
          // A binary payload: read as NCCL's schemas in the export describe it (nvtx_schemas.h).
          ++binary_;
          NcclPayload pl = scans_.schemas().decode(domain, text, q.text(9), undescribed_);
          n.bytes = pl.bytes, n.nranks = pl.nranks, n.peer = pl.peer, n.comm = pl.comm;
        }
        nccl_ranges_.push_back(std::move(n));
      }
      r_.tracks[track].events.push_back(e);
    }
    // A domain's ranges carry its name as their category ("NCCL"); an unnamed domain, "nvtx domain N".
    std::map<int64_t, model::StringId> domain_cat;
    for (const InDomain& d : in_domain) {
      auto [it, fresh] = domain_cat.try_emplace(d.domain, 0);
      if (fresh)
        it->second = r_.strings.intern(domains.count(d.domain) ? domains[d.domain]
                                                               : fmt::format("{} domain {}", k::kCatNvtx, d.domain));
      r_.tracks[d.track].events[d.index].cat = it->second;
    }
  }

  void link() {
    if (nccl_.empty() || nccl_ranges_.empty()) return;
    std::vector<NcclLaunch> launches;
    for (const auto& n : nccl_) launches.push_back({&r_.tracks[n.track].events[n.index], n.tid, n.at});
    described_ = link_nccl(nccl_ranges_, launches);
    for (size_t i = 0; i < launches.size(); ++i) {
      if (launches[i].peer >= 0) peers_.push_back({nccl_[i].track, nccl_[i].index, launches[i].peer});
      if (launches[i].comm) comm_of_[at_key(nccl_[i].track, nccl_[i].index)] = *launches[i].comm;
      if (launches[i].all_to_all) all_to_all_.push_back({nccl_[i].track, nccl_[i].index});
    }
  }

  // The kernels PyTorch's range names an all-to-all (nccl_link.h): after NCCL's table, which may name them by
  // the sends and receives they run.
  void name_all_to_all() {
    for (auto [track, index] : all_to_all_) {
      model::Event& e = r_.tracks[track].events[index];
      if (e.coll == model::CollectiveKind::SendRecv || e.coll == model::CollectiveKind::Unknown ||
          e.coll == model::CollectiveKind::None)
        e.coll = model::CollectiveKind::AllToAll, ++named_all_to_all_;
    }
  }

  void finish() {
    r_.rank = p_.rank;
    r_.world_size = p_.world_size;
    r_.source = x_.db.name();
    r_.format = "nsys";
    if (x_.has_base) r_.clock_sync.push_back({0, 0});  // times are on the wall clock (UTC ns), as Kineto's
    nlohmann::json meta = {{"pid", p_.pid},
                           {"process", p_.name},
                           {"schema_version", x_.schema_version},
                           {"product_version", x_.product_version}};
    if (!p_.rank_from.empty()) meta["rank_from"] = p_.rank_from;
    if (!nccl_.empty()) meta["nccl_kernels_described_by_nvtx"] = described_;
    if (named_all_to_all_) meta["all_to_all_kernels_named_by_nvtx"] = named_all_to_all_;
    if (!nccl_table_.is_null()) meta["nccl_table"] = nccl_table_;
    if (graph_launches_) meta["cuda_graph_launches"] = graph_launches_;  // whole, in graph-trace mode
    if (!group_size_from_.is_null()) meta["group_size_from"] = group_size_from_;
    if (!memory_meta_.is_null()) meta["cuda_memory"] = memory_meta_;
    r_.metadata["nsys"] = meta;
    if (file_warnings_ && !x_.missing.empty())
      r_.warnings.push_back(
          fmt::format("{}: not in this export (read what is there): {}", r_.source, fmt::join(x_.missing, ", ")));
    if (file_warnings_ && !x_.unread.empty())
      r_.warnings.push_back(
          fmt::format("{}: GPU work in tables the importer does not read, left out of every figure: {}", r_.source,
                      fmt::join(x_.unread, ", ")));
    if (file_warnings_ && !x_.has_base)
      r_.warnings.push_back(
          fmt::format("{}: no session start ({}.{}): times are the export's own, not aligned with other files",
                      r_.source, k::kSessionStart, k::kUtcEpochNs));
    if (skipped_)
      r_.warnings.push_back(
          fmt::format("{}: {} event(s) with missing or out-of-range times left out", r_.source, skipped_));
    if (binary_ && !scans_.schema_missing().empty())
      r_.warnings.push_back(
          fmt::format("{}: {} NCCL range(s) with a binary payload and no schema to read it by (not in this export: "
                      "{}): their bytes unknown",
                      r_.source, binary_, fmt::join(scans_.schema_missing(), ", ")));
    else if (undescribed_)
      r_.warnings.push_back(fmt::format(
          "{}: {} field(s) of NCCL's binary payloads that {} does not describe (or describes two ways) left unknown",
          r_.source, undescribed_, k::kPayloadEntries));
    if (unended_)
      r_.warnings.push_back(fmt::format("{}: {} NVTX range(s) that never ended left out", r_.source, unended_));
    trainer();
    // A thread's CUDA calls and its NVTX ranges each come in time order (exports write them so): merged in
    // linear time here, where finalize() would sort them.
    for (size_t i = 0; i < split_.size() && i < r_.tracks.size(); ++i) {
      std::vector<model::Event>& ev = r_.tracks[i].events;
      const auto mid = ev.begin() + ptrdiff_t(split_[i]);
      if (split_[i] > 0 && mid != ev.end() && std::is_sorted(ev.begin(), mid, model::event_before) &&
          std::is_sorted(mid, ev.end(), model::event_before))
        std::inplace_merge(ev.begin(), mid, ev.end(), model::event_before);
    }
    // A send/recv kernel's peer rank (nccl_link.h), as the event's arg "peer" where args are kept: the model
    // has no field for it.
    if (args_) {
      model::ArgsBuilder b(r_.strings);
      for (const Peer& p : peers_) {
        b.begin(p.track, p.index);
        b.add(k::kArgPeer, int64_t(p.peer));
      }
      *args_ = b.finalize(r_);
    } else {
      r_.finalize();
    }
    if (!peers_.empty()) r_.metadata["nsys"]["send_recv_kernels_with_peer"] = peers_.size();
    // FSDP's labels, where PyTorch's emit_nvtx wrote them: units for the prefetch check.
    if (!has_fsdp_labels(r_)) return;
    std::vector<std::pair<int64_t, int64_t>> calls;
    calls.reserve(calls_.size());
    for (const Call& c : calls_) calls.emplace_back(c.ts, c.tid);
    std::vector<Call>().swap(calls_);
    std::sort(calls.begin(), calls.end());
    if (size_t units = derive_units(r_, calls)) r_.metadata["nsys"]["fsdp_units"] = units;
  }

  // The device events with their launch's correlationId, found again from issued_ns (the launch's start) for
  // the few readers that need it, rather than kept for every event of every export: a call starting at the
  // same nanosecond as another of the process's calls is ambiguous and left out.
  std::vector<plugins::gpu_join::DeviceWork> launched() const {
    std::vector<std::pair<int64_t, int64_t>> by_ts;  // (start, correlationId)
    by_ts.reserve(calls_.size());
    for (const Call& c : calls_) by_ts.emplace_back(c.ts, c.corr);
    std::sort(by_ts.begin(), by_ts.end());
    std::vector<plugins::gpu_join::DeviceWork> out;
    for (uint32_t t = 0; t < r_.tracks.size(); ++t) {
      if (r_.tracks[t].kind != model::TrackKind::DeviceStream) continue;
      const std::vector<model::Event>& ev = r_.tracks[t].events;
      for (uint32_t i = 0; i < ev.size(); ++i) {
        if (ev[i].issued_ns == model::kUnknown) continue;
        auto c = std::lower_bound(by_ts.begin(), by_ts.end(), std::pair(ev[i].issued_ns, INT64_MIN));
        if (c == by_ts.end() || c->first != ev[i].issued_ns || (c + 1 != by_ts.end() && (c + 1)->first == c->first))
          continue;
        out.push_back({{t, i}, c->second, model::kUnknown, model::kUnknown});
      }
    }
    return out;
  }

  // NCCL's composite table, where the export has one: the instance (communicator, sequence number) and bytes
  // of each NCCL kernel, over what its NVTX ranges said.
  void nccl_ops() {
    if (nccl_.empty()) return;
    NcclOpsResult n = read_nccl_ops(x_, scans_, p_.key, r_, launched());
    if (n.table.empty()) return;
    for (const NcclOpsResult::Comm& c : n.comms)
      comm_of_[at_key(c.track, c.index)] = c.comm;  // over what the ranges said
    nccl_table_ = {{"table", n.table}, {"rows", n.rows}, {"kernels", n.linked}};
    if (!x_.comms.table_size_column.empty()) nccl_table_["size_column"] = x_.comms.table_size_column;
    if (file_warnings_ && !n.missing.empty())
      r_.warnings.push_back(fmt::format("{}: NCCL's table {} lacks {}: {}", x_.db.name(), n.table,
                                        fmt::join(n.missing, ", "),
                                        n.linked ? "kinds or bytes stay as the kernels' names and NVTX ranges say"
                                                 : "its rows are not linked to kernels"));
  }

  static uint64_t at_key(uint32_t track, uint32_t index) { return uint64_t(track) << 32 | index; }

  // Each NCCL kernel's group size (for busbw) from its communicator (nccl_comms.h): NCCL's table's size
  // column, else the size its own ranges' payloads said, else its communicator's init payload, else the
  // ranks of the file seen using the communicator; the kernel's group is the communicator where only its
  // NVTX ranges said it. Where the size is not NCCL's own, the load says so.
  void group_sizes() {
    std::map<std::string, size_t> from;
    std::map<uint64_t, CommSize> counted, unsized;  // by communicator: sized by counting, left unknown
    size_t n_counted = 0, n_unsized = 0;
    for (auto [at, comm] : comm_of_) {
      model::Event& e = r_.tracks[at >> 32].events[at & 0xFFFFFFFF];
      if (e.cls != IntervalClass::Communication) continue;
      if (e.group == 0) e.group = r_.strings.intern(fmt::format("nccl comm {:#x}", comm));
      const CommSize s = x_.comms.size(comm);
      if (s.from == std::string_view(kSizeFromTable) || (e.group_size <= 0 && s.nranks > 0)) {
        e.group_size = s.nranks;
        ++from[s.from];
        if (s.from == std::string_view(kSizeFromMembers)) counted.emplace(comm, s), ++n_counted;
      } else if (e.group_size > 0) {
        ++from[kSizeFromRanges];
      } else {
        unsized.emplace(comm, s), ++n_unsized;
      }
    }
    if (!from.empty()) group_size_from_ = from;
    auto comms = [](const std::map<uint64_t, CommSize>& m) {
      std::vector<std::string> out;
      for (auto& [c, s] : m) out.push_back(fmt::format("nccl comm {:#x}: {} rank(s)", c, s.members));
      return first_few(out);
    };
    if (n_counted)
      r_.warnings.push_back(
          fmt::format("{}: group size of {} NCCL kernel(s) not in NCCL's records (no size column in its table, no "
                      "communicator-init "
                      "payload): taken as the ranks of this file that use the communicator ({})",
                      x_.db.name(), n_counted, comms(counted)));
    if (n_unsized)
      r_.warnings.push_back(
          fmt::format("{}: group size of {} NCCL kernel(s) unknown (busbw n/a): not in NCCL's records, and fewer than "
                      "two ranks of this "
                      "file use the communicator ({})",
                      x_.db.name(), n_unsized, comms(unsized)));
  }

  // shardscope-train's own ranges (nsys_trainer.h): before the merge below, while the indices hold.
  void trainer() {
    if (trainer_.ranges.empty()) return;
    for (const Call& c : calls_)
      if (auto h = host_tracks_.find(c.tid); h != host_tracks_.end()) trainer_.api.push_back({h->second, c.ts, c.corr});
    for (auto [tid, track] : host_tracks_) trainer_.threads.emplace_back(tid, track);
    trainer_.device = launched();
    const TrainerStats s = apply_trainer(r_, trainer_);
    if (s.unit_ranges == 0 && s.steps == 0) return;
    r_.metadata["nsys"]["trainer"] = {
        {"steps", s.steps}, {"unit_ranges", s.unit_ranges}, {"collectives_joined", s.joined}};
    if (!has_int64_)
      r_.warnings.push_back(
          fmt::format("{}: shardscope-train's NVTX ranges without payloads ({}.{} not in this export): units and step "
                      "numbers unknown",
                      r_.source, k::kNvtx, k::kInt64Value));
    else if (s.without_payload)
      r_.warnings.push_back(
          fmt::format("{}: {} of shardscope-train's NVTX ranges without a unit or step number in their payload ({}) "
                      "left without one",
                      x_.db.name(), s.without_payload, k::kInt64Value));
  }

  struct NcclAt {
    uint32_t track, index;
    int64_t tid, at;
  };

  Export& x_;
  ProcessScans& scans_;
  const Process& p_;
  bool file_warnings_;
  model::EventArgs* args_;
  struct Peer {
    uint32_t track, index;
    int peer;
  };
  std::vector<Peer> peers_;
  std::vector<std::pair<uint32_t, uint32_t>> all_to_all_;  // (track, index) of kernels in an all-to-all range
  std::map<uint64_t, uint64_t> comm_of_;                   // NCCL kernel (at_key) -> its communicator
  model::Rank r_;
  std::map<std::pair<int64_t, int64_t>, uint32_t> device_tracks_;
  std::unordered_map<int64_t, uint32_t> host_tracks_;
  std::unordered_map<int64_t, model::StringId> ids_;
  std::unordered_map<int64_t, model::StringId> graph_names_;  // graphId -> "CUDA graph N"
  std::unordered_map<int64_t, std::string> thread_names_;
  std::unordered_map<int64_t, int64_t> stream_device_;
  std::set<int64_t> devices_;
  std::vector<Call> calls_;
  std::vector<NcclAt> nccl_;
  std::vector<NcclRange> nccl_ranges_;
  std::vector<size_t> split_;  // per track, where its NVTX events begin
  size_t described_ = 0, named_all_to_all_ = 0;
  TrainerInput trainer_;
  bool has_int64_ = false;
  size_t binary_ = 0, undescribed_ = 0;
  nlohmann::json nccl_table_, group_size_from_, memory_meta_;
  uint64_t skipped_ = 0, unended_ = 0, graph_launches_ = 0;
};

}  // namespace

model::Rank read_rank(Export& x, ProcessScans& scans, const Process& p, bool file_warnings, model::EventArgs* args) {
  return RankBuilder(x, scans, p, file_warnings, args).build();
}

}  // namespace shardscope::nsys
