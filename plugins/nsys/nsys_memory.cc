#include "plugins/nsys/nsys_memory.h"

#include <algorithm>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "model/saturating.h"
#include "plugins/nsys/nsys_keys.h"

namespace shardscope::nsys {
namespace k = nsys_keys;

namespace {

struct Row {
  int64_t ts, device, bytes, op;
  uint64_t addr;
  uint32_t track;
};

}  // namespace

MemoryRecords read_memory(Export& x, ProcessScans& scans, int64_t key, model::Rank& r,
                          const std::function<uint32_t(int64_t)>& track_of) {
  MemoryRecords out;
  const char* t = k::kGpuMemoryUsage;
  if (!x.db.has_table(t)) return out;
  out.table = true;
  auto col = [&](const char* c) { return x.db.has_column(t, c) ? quoted(c) : std::string("NULL"); };
  ProcessRows& q =
      scans.of(key,
               fmt::format("SELECT {}, {}, {}, {}, {}, {}, {}", col(k::kStart), col(k::kDeviceId), col(k::kAddress),
                           col(k::kBytes), col(k::kMemKind), col(k::kMemoryOperationType), col(k::kCorrelationId)),
               t, x.db.has_column(t, k::kGlobalPid) ? k::kGlobalPid : "");
  std::vector<Row> rows;
  while (q.row()) {
    const int64_t kind = q.i64_or(4, k::kMemKindDevice);
    if (kind == k::kMemKindPageable || kind == k::kMemKindPinned) {
      ++out.host;
      continue;
    }
    int64_t ts = 0;
    if (q.null(0) || __builtin_add_overflow(q.i64(0), x.base_ns, &ts) || ts == model::kUnknown) {
      ++out.bad_time;
      continue;
    }
    const int64_t op = q.i64_or(5, -1), bytes = q.i64_or(3, -1);
    if (op != k::kMemAllocation && op != k::kMemDeallocation) {
      ++out.odd_operation;
      continue;
    }
    // A free's bytes are not used (its allocation's are): only an allocation must say its size.
    if (q.null(3) ? op == k::kMemAllocation : bytes < 0) {
      ++out.negative;
      continue;
    }
    const int64_t corr = q.i64_or(6, model::kUnknown);
    rows.push_back(
        {ts, q.i64(1), bytes, op, uint64_t(q.i64(2)), corr == model::kUnknown ? UINT32_MAX : track_of(corr)});
  }
  // The running total needs time order; the file's order among equal times is kept.
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.ts < b.ts; });
  std::map<std::pair<int64_t, uint64_t>, int64_t> live;  // (device, address) -> bytes
  std::map<int64_t, int64_t> total;                      // device -> bytes allocated
  for (const Row& w : rows) {
    model::AllocatorEvent a;
    a.ts_ns = w.ts, a.addr = w.addr, a.track = w.track, a.device = int32_t(w.device);
    if (w.op == k::kMemAllocation) {
      a.bytes = w.bytes;
      live[{w.device, w.addr}] = w.bytes;  // a second allocation at a live address: the free was lost
    } else {
      // A free's size is its allocation's (a release may report 0 bytes); one of no allocation seen would
      // take the total below what the process holds, so it is left out.
      auto it = live.find({w.device, w.addr});
      if (it == live.end()) {
        ++out.free_unseen;
        continue;
      }
      a.bytes = model::sat_neg(it->second);
      live.erase(it);
    }
    int64_t& sum = total[w.device];
    sum = model::sat_add(sum, a.bytes);
    a.total_allocated = sum;
    r.allocator.push_back(a);
    ++out.read;
  }
  return out;
}

std::string memory_warning(const std::string& source, const MemoryRecords& m) {
  if (m.left_out() == 0) return "";
  std::vector<std::string> why;
  if (m.negative) why.push_back(fmt::format("{} with negative or no bytes", m.negative));
  if (m.free_unseen) why.push_back(fmt::format("{} freeing an address with no allocation seen", m.free_unseen));
  if (m.odd_operation)
    why.push_back(
        fmt::format("{} of an operation type other than allocation (0) or deallocation (1)", m.odd_operation));
  if (m.bad_time) why.push_back(fmt::format("{} with a missing or out-of-range time", m.bad_time));
  return fmt::format("{}: {} of {}'s {} record(s) left out of the measured memory ({})", source, m.left_out(),
                     k::kGpuMemoryUsage, m.left_out() + m.read, fmt::join(why, ", "));
}

}  // namespace shardscope::nsys
