// `report --mpi`. The map runs where the files are: process p summarises the files whose place among the
// inputs is p modulo the process count (or, with --files-per-process, the files its own path names). Each
// process folds its ranks' collective arrivals into its own instance table as it summarises them and keeps
// only each rank's report; the tables are reduced to process 0 over a binomial tree (a message grows with
// the collective instances, never with ranks), then the ranks' reports are sent to process 0 one at a time
// in file order. Process 0 checks the ranks are one run, re-judges each rank's prefetch against the final
// table and writes the report: the one-process report, byte for byte. Nothing anywhere holds ranks x
// collectives. A process that fails says so before any table moves: no process waits on one that gave up.
// Built as its own module (libshardscope_mpi.so), loaded by report_mpi_load.cc only for --mpi.
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <ostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analyzer/analysis/reduce.h"
#include "analyzer/analysis/run.h"
#include "analyzer/analysis/summary_codec.h"
#include "analyzer/cli/output.h"
#include "analyzer/cli/report.h"
#include "tracer/format/error.h"

namespace shardscope::cli {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

enum Tag : int { kError = 1, kTable = 2, kRank = 3, kPath = 4 };
// Messages go in pieces of at most this many bytes (MPI counts are int).
constexpr uint64_t kChunk = uint64_t(1) << 30;

// A size (uint64) and then the bytes; synchronous, so a sender waits for its receiver rather than piling
// messages up in the receiver's memory.
void send_bytes(const Bytes& b, int to, Tag tag) {
  uint64_t n = b.size();
  MPI_Ssend(&n, 1, MPI_UINT64_T, to, tag, MPI_COMM_WORLD);
  for (uint64_t at = 0; at < n; at += kChunk)
    MPI_Ssend(b.data() + at, int(std::min(kChunk, n - at)), MPI_BYTE, to, tag, MPI_COMM_WORLD);
}

Bytes recv_bytes(int from, Tag tag) {
  uint64_t n = 0;
  MPI_Recv(&n, 1, MPI_UINT64_T, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  Bytes b(n);
  for (uint64_t at = 0; at < n; at += kChunk)
    MPI_Recv(b.data() + at, int(std::min(kChunk, n - at)), MPI_BYTE, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return b;
}

// The instances of a table (not its per-rank counts, which travel with each rank's report), as fixed-width
// fields: what the tree sends.
template <typename T>
void put(Bytes& b, T v) {
  const size_t at = b.size();
  b.resize(at + sizeof v);
  std::memcpy(b.data() + at, &v, sizeof v);
}
template <typename T>
T take(const Bytes& b, size_t& at) {
  T v;
  if (b.size() - at < sizeof v) throw std::runtime_error("MPI: a truncated instance table");
  std::memcpy(&v, b.data() + at, sizeof v);
  at += sizeof v;
  return v;
}

Bytes encode_instances(const metrics::InstanceTable& t) {
  Bytes b;
  put<uint64_t>(b, t.instances().size());
  for (const auto& [id, in] : t.instances()) {
    put<uint8_t>(b, uint8_t(id.kind)), put<uint8_t>(b, uint8_t(id.by_seq)), put<int64_t>(b, id.n);
    put<uint64_t>(b, id.group.size());
    b.insert(b.end(), id.group.begin(), id.group.end());
    put(b, in.first_ns), put(b, in.last_ns), put(b, in.next_last_ns);
    for (const metrics::RankKey& k : {in.last_lo, in.last_hi}) put<int32_t>(b, k.rank), put<uint64_t>(b, k.order);
    put<uint32_t>(b, in.ranks);
    put<int64_t>(b, in.fastest_ns), put<int64_t>(b, in.bytes), put<int32_t>(b, in.group_size);
  }
  return b;
}

metrics::InstanceTable decode_instances(const Bytes& b) {
  metrics::InstanceTable::Row instances;
  size_t at = 0;
  for (uint64_t count = take<uint64_t>(b, at); count > 0; --count) {
    metrics::InstanceId id;
    id.kind = model::CollectiveKind(take<uint8_t>(b, at));
    id.by_seq = take<uint8_t>(b, at) != 0;
    id.n = take<int64_t>(b, at);
    const uint64_t group = take<uint64_t>(b, at);
    if (b.size() - at < group) throw std::runtime_error("MPI: a truncated instance table");
    id.group.assign(reinterpret_cast<const char*>(b.data() + at), size_t(group));
    at += size_t(group);
    metrics::Instance& in = instances[std::move(id)];
    in.first_ns = take<int64_t>(b, at), in.last_ns = take<int64_t>(b, at), in.next_last_ns = take<int64_t>(b, at);
    for (metrics::RankKey* k : {&in.last_lo, &in.last_hi})
      k->rank = take<int32_t>(b, at), k->order = take<uint64_t>(b, at);
    in.ranks = take<uint32_t>(b, at);
    in.fastest_ns = take<int64_t>(b, at), in.bytes = take<int64_t>(b, at), in.group_size = take<int32_t>(b, at);
  }
  return metrics::InstanceTable::from_parts(std::move(instances), {});
}

// One file of the run as process 0 needs it, CBOR: {"order", "skipped": true} for a file no importer reads,
// else the rank's summary without its arrivals (report, header, warnings) and its instance count per kind.
Bytes encode_rank(analysis::RankSummary&& s) {
  std::map<model::CollectiveKind, uint64_t> per_kind;
  for (const auto& [kind, starts] : s.arrivals.wall_start) per_kind[kind] += starts.size();
  for (const metrics::KeyedArrival& a : s.arrivals.keyed) ++per_kind[a.id.kind];
  nlohmann::json counts = nlohmann::json::array();
  for (const auto& [kind, n] : per_kind) counts.push_back({int(kind), n});
  s.arrivals.wall_start.clear();
  s.arrivals.size.clear();
  s.arrivals.keyed.clear();
  nlohmann::json j = analysis::encode(s);
  j["order"] = s.key().order;
  j["counts"] = std::move(counts);
  return nlohmann::json::to_cbor(j);
}

// A file its process found that no importer reads (a training log in the traces' directory): passed over.
Bytes skipped(uint64_t order, const std::string& path) {
  return nlohmann::json::to_cbor({{"order", order}, {"skipped", true}, {"path", path}});
}

// This process's part of the map.
struct Share {
  std::string error;  // the first thing that went wrong here, if anything did
  uint64_t first = 0,
           count = 0;      // its files: orders first, first + procs, ... (count of them), or first .. first + count - 1
  uint64_t run_files = 0;  // the run's
  std::vector<fs::path> files;      // those it expanded: the run's, or (--files-per-process) its own
  metrics::InstanceTable table;     // its ranks' arrivals, folded
  std::map<uint64_t, Bytes> ranks;  // by order: encode_rank
};

// The path a process reads with --files-per-process: {rank} and {local_rank} replaced.
std::string own_path(std::string pattern, int me, int local) {
  for (auto [name, value] : {std::pair<std::string, int>{"{rank}", me}, {"{local_rank}", local}})
    for (size_t at; (at = pattern.find(name)) != std::string::npos;)
      pattern.replace(at, name.size(), std::to_string(value));
  return pattern;
}

// The process that summarised the file at `order`.
struct Owners {
  bool own_paths = false;         // --files-per-process: process p has the files from offsets[p] on
  std::vector<uint64_t> offsets;  // own_paths: procs + 1 of them
  int procs = 1;
  int of(uint64_t order) const {
    if (!own_paths) return int(order % uint64_t(procs));
    return int(std::upper_bound(offsets.begin(), offsets.end(), order) - offsets.begin()) - 1;
  }
};

// The lowest-numbered process that failed (procs: none did), known to every process; process 0 gets its error.
int agree_on_failure(const std::string& error, int me, int procs, std::string& first_error) {
  int failed = error.empty() ? procs : me;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (failed == procs) return failed;
  if (me == failed && me != 0) send_bytes(Bytes(error.begin(), error.end()), 0, kError);
  if (me == 0) {
    if (failed == 0) first_error = error;
    else {
      const Bytes b = recv_bytes(failed, kError);
      first_error.assign(b.begin(), b.end());
    }
  }
  return failed;
}

// The tables of every process folded into process 0's: process p takes in those of p + 1, p + 2, p + 4, ...
// (while p's bit at that step is 0) and then sends its own to p minus its lowest set bit.
void reduce_tables(metrics::InstanceTable& table, int me, int procs) {
  for (int step = 1; step < procs; step <<= 1) {
    if (me & step) {
      send_bytes(encode_instances(table), me - step, kTable);
      return;
    }
    if (me + step < procs) table.merge(decode_instances(recv_bytes(me + step, kTable)));
  }
}

}  // namespace

}  // namespace shardscope::cli

// The module's one exported symbol, which report_mpi_load.cc looks up: report_mpi's signature.
extern "C" __attribute__((visibility("default"))) int shardscope_report_mpi(
    const std::vector<std::string>& paths_given, const std::string& format, const std::string& output,
    std::ostream& out, std::ostream& err, const shardscope::plugins::ReadRules& rules,
    const shardscope::report::Selection& sel, const std::string& files_per_process,
    const shardscope::metrics::MemoryGiven& given) {
  using namespace shardscope;
  using namespace shardscope::cli;
  MPI_Init(nullptr, nullptr);
  int me = 0, procs = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &procs);
  Owners owners{.own_paths = !files_per_process.empty(), .procs = procs};
  std::vector<std::string> paths = paths_given;
  if (owners.own_paths) {
    MPI_Comm node;  // the processes that share this one's memory: its node
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &node);
    int local = 0;
    MPI_Comm_rank(node, &local);
    MPI_Comm_free(&node);
    paths = {own_path(files_per_process, me, local)};
  }

  // The map: this process's files summarised, each rank's arrivals folded as it is made.
  Share share;
  std::vector<std::string> refusals;  // process 0's: the plugins refused, the first of the report's warnings
  std::optional<plugins::Registry> registry;
  try {
    registry = plugins::default_registry(refusals);
    share.files = plugins::expand_inputs(std::vector<fs::path>(paths.begin(), paths.end()));
  } catch (const std::exception& e) {
    share.error = e.what();
  }
  // How many files each process sees: every process the run's (a shared file system), or its own.
  constexpr uint64_t kFailed = UINT64_MAX;
  std::vector<uint64_t> counts(static_cast<size_t>(procs));
  const uint64_t n = share.error.empty() ? share.files.size() : kFailed;
  MPI_Allgather(&n, 1, MPI_UINT64_T, counts.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
  try {
    if (share.error.empty()) {
      const bool any_failed = std::count(counts.begin(), counts.end(), kFailed) > 0;
      if (owners.own_paths) {
        owners.offsets.assign(1, 0);
        for (uint64_t c : counts) owners.offsets.push_back(owners.offsets.back() + (c == kFailed ? 0 : c));
      } else {
        for (int p = 0; p < procs; ++p)
          if (counts[size_t(p)] != n && counts[size_t(p)] != kFailed)
            throw std::runtime_error(fmt::format(
                "MPI process {} finds {} files in {} and MPI process {} finds {}: every process must see the "
                "same files (a shared file system), or each name its own with --files-per-process",
                p, counts[size_t(p)], fmt::join(paths, " "), me, n));
      }
      share.run_files = owners.own_paths ? owners.offsets.back() : n;
      share.first = owners.own_paths ? owners.offsets[size_t(me)] : uint64_t(me);
      share.count = owners.own_paths ? n : (n + uint64_t(procs) - 1 - uint64_t(me)) / uint64_t(procs);
      std::mutex mu;
      plugins::LoadOptions options{.registry = &*registry, .rules = rules};
      if (owners.own_paths) options.first_order = share.first, options.run_files = share.run_files;
      else
        options.mine = [&](uint64_t order) { return owners.of(order) == me; };
      // Another process failed before reading: this one need not read (the job ends with that error).
      if (!any_failed)
        analysis::summarize_each(paths, options, analysis::Scope::Everything, [&](analysis::RankSummary&& s) {
          const uint64_t order = s.key().order;
          metrics::InstanceTable one;
          one.add(s.arrivals);
          Bytes rank = encode_rank(std::move(s));
          std::lock_guard lock(mu);
          share.table.merge(one);
          share.ranks.emplace(order, std::move(rank));
        });
    }
  } catch (const std::exception& e) {
    share.error = e.what();
  }
  std::string first_error;
  if (const int failed = agree_on_failure(share.error, me, procs, first_error); failed < procs) {
    if (me == 0) err << fmt::format("shardscope: error: {} (MPI process {} of {})\n", first_error, failed, procs);
    MPI_Finalize();
    return 2;
  }

  // The reduce: the tables, then each rank's report, in file order, to process 0.
  reduce_tables(share.table, me, procs);
  int rc = 0;
  if (me != 0) {
    const uint64_t step = owners.own_paths ? 1 : uint64_t(procs);
    for (uint64_t k = 0, order = share.first; k < share.count; ++k, order += step) {
      auto it = share.ranks.find(order);
      send_bytes(it == share.ranks.end() ? skipped(order, share.files.at(owners.own_paths ? k : order).string())
                                         : std::move(it->second),
                 0, kRank);
      if (it != share.ranks.end()) share.ranks.erase(it);
    }
    if (owners.own_paths) send_bytes(Bytes(paths[0].begin(), paths[0].end()), 0, kPath);
  } else {
    // Process 0: what the loader checks and warns of (as plugins::load_each does at its end), then the report.
    std::vector<std::string> warnings = std::move(refusals);
    std::vector<plugins::RankHeader> headers;
    std::map<metrics::RankKey, int> world;  // each rank's world size, as the one-process reduce keeps it
    std::vector<std::pair<metrics::RankKey, report::RankReport>> reports;
    std::vector<metrics::InstanceTable::RankCounts> rank_counts;
    uint64_t passed = 0;  // the files no importer reads
    std::string error;    // the first; every message is still taken in, so no sender waits forever
    for (uint64_t order = 0; order < share.run_files; ++order) {
      const int from = owners.of(order);
      Bytes b;
      if (from == 0) {
        auto it = share.ranks.find(order);
        if (it != share.ranks.end()) b = std::move(it->second), share.ranks.erase(it);
      } else {
        b = recv_bytes(from, kRank);
      }
      if (!error.empty()) continue;
      try {
        if (b.empty()) {  // a file of process 0's that no importer reads
          warnings.push_back(plugins::passed_over(share.files.at(order).string()));
          ++passed;
          continue;
        }
        const nlohmann::json j = nlohmann::json::from_cbor(b);
        if (j.at("order").get<uint64_t>() != order)
          throw std::runtime_error(fmt::format("MPI: file {} came from process {} out of order", order, from));
        if (j.contains("skipped")) {
          warnings.push_back(plugins::passed_over(j.at("path").get<std::string>()));
          ++passed;
          continue;
        }
        analysis::RankSummary s = analysis::decode_summary(j);
        for (std::string& w : s.warnings) warnings.push_back(std::move(w));
        world[s.key()] = s.header.world_size;
        headers.push_back(std::move(s.header));
        metrics::InstanceTable::RankCounts& c = rank_counts.emplace_back();
        c.key = s.key(), c.clock_mapped = s.arrivals.clock_mapped;
        for (const nlohmann::json& kc : j.at("counts"))
          c.count[model::CollectiveKind(kc.at(0).get<int>())] = kc.at(1).get<uint64_t>();
        reports.emplace_back(s.key(), std::move(s.report));
      } catch (const std::exception& e) {
        error = e.what();
      }
    }
    if (owners.own_paths)
      for (int p = 1; p < procs; ++p) {
        const Bytes b = recv_bytes(p, kPath);
        paths.emplace_back(b.begin(), b.end());
      }
    rc = guarded(err, [&] {
      if (!error.empty()) throw std::runtime_error(error);
      // As one process judges its files: some found and none a trace is an error, not an empty report.
      if (headers.empty() && passed > 0)
        throw trace::TraceError(share.files.front().parent_path().string(), 0,
                                "no file here is a trace any importer reads");
      plugins::check_one_run(headers, warnings, {.allow_mixed = rules.allow_mixed});
      analysis::RunReducer reducer = analysis::RunReducer::from_parts(
          metrics::InstanceTable::from_parts(share.table.instances(), std::move(rank_counts)), std::move(reports),
          std::move(world));
      report::Report r = std::move(reducer).finish(paths, warnings, analysis::Scope::Everything);
      print_warnings(r.warnings, err);
      give_memory(r, given);
      return write_result(format, report_result(r, sel), output, out, err) ? 0 : 2;
    });
  }
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return rc;
}
