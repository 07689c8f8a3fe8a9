#include "plugins/nsys/nccl_link.h"

#include <algorithm>

#include "model/classify.h"
#include "plugins/nsys/nsys_keys.h"

namespace shardscope::nsys {
namespace k = nsys_keys;

namespace {

model::CollectiveKind kind_of(std::string_view name) {
  if (name == k::kNcclSend || name == k::kNcclRecv) return model::CollectiveKind::SendRecv;
  if (name.starts_with("nccl")) name.remove_prefix(4);
  return model::collective_from_op_name(name);
}

// PyTorch's all-to-all ranges ("nccl:all_to_all, op_id = 12"), by thread and start.
struct Around {
  int64_t tid, start, end;
};
std::vector<Around> all_to_all_ranges(const std::vector<NcclRange>& ranges) {
  std::vector<Around> out;
  for (const NcclRange& r : ranges)
    if (r.name.starts_with("nccl:") && model::collective_from_op_name(r.name) == model::CollectiveKind::AllToAll)
      out.push_back({r.tid, r.start, r.end});
  return out;  // in `ranges`' order: by thread, then start
}

bool inside(const std::vector<Around>& around, int64_t tid, int64_t at) {
  auto it = std::upper_bound(around.begin(), around.end(), std::pair(tid, at), [](auto t, const Around& r) {
    return t.first != r.tid ? t.first < r.tid : t.second < r.start;
  });
  // Ranges of one thread do not overlap but by nesting: a few back suffice.
  for (int looked = 0; it != around.begin() && looked < 4; ++looked) {
    --it;
    if (it->tid != tid) return false;
    if (it->end >= at) return true;
  }
  return false;
}

}  // namespace

size_t link_nccl(std::vector<NcclRange>& ranges, std::vector<NcclLaunch>& launches) {
  std::sort(ranges.begin(), ranges.end(),
            [](const NcclRange& a, const NcclRange& b) { return a.tid != b.tid ? a.tid < b.tid : a.start < b.start; });
  size_t described = 0;
  const std::vector<Around> around = all_to_all_ranges(ranges);
  for (NcclLaunch& l : launches) {
    l.all_to_all = !around.empty() && inside(around, l.tid, l.at);
    // The innermost range on the thread that holds the launch: the last one starting at or before it.
    auto lo =
        std::lower_bound(ranges.begin(), ranges.end(), l.tid, [](const NcclRange& r, int64_t t) { return r.tid < t; });
    auto hi = std::upper_bound(lo, ranges.end(), l.tid, [](int64_t t, const NcclRange& r) { return t < r.tid; });
    auto after = std::upper_bound(lo, hi, l.at, [](int64_t t, const NcclRange& r) { return t < r.start; });
    const NcclRange* holder = nullptr;
    int looked = 0;  // a launch far from any NCCL range: stop looking after a few
    for (auto it = after; it != lo && looked++ < 64;) {
      --it;
      if (it->end >= l.at) {
        holder = &*it;
        break;
      }
      if (it->name == k::kNcclGroupStart) break;
    }
    if (!holder) continue;
    // The calls it stands for: itself, or the ones of its group.
    std::vector<const NcclRange*> calls;
    if (holder->name == k::kNcclGroupEnd) {
      auto end_at = std::find_if(lo, hi, [&](const NcclRange& r) { return &r == holder; });
      for (auto it = end_at; it != lo;) {
        --it;
        if (it->name == k::kNcclGroupStart) break;
        if (it->name != k::kNcclGroupEnd && it->end <= holder->start) calls.push_back(&*it);
      }
    } else {
      calls.push_back(holder);
    }
    model::CollectiveKind kind = model::CollectiveKind::None;
    int64_t bytes = 0;
    bool all_sized = true;
    int nranks = 0, peer = -1;
    bool one_peer = true, one_comm = true;
    std::optional<uint64_t> comm;
    for (const NcclRange* c : calls) {
      if (c->comm) {
        if (comm && *comm != *c->comm) one_comm = false;
        comm = c->comm;
      }
      if (c->name == k::kNcclSend || c->name == k::kNcclRecv) {
        if (c->peer < 0 || (peer >= 0 && c->peer != peer)) one_peer = false;
        else
          peer = c->peer;
      }
      model::CollectiveKind ck = kind_of(c->name);
      if (ck == model::CollectiveKind::None || ck == model::CollectiveKind::Unknown) continue;
      kind = kind == model::CollectiveKind::None || kind == ck ? ck : model::CollectiveKind::Unknown;
      // nccl-tests count a send/recv pair by what is sent.
      if (c->name == k::kNcclRecv) continue;
      if (c->bytes < 0 || __builtin_add_overflow(bytes, c->bytes, &bytes)) all_sized = false;
      nranks = std::max(nranks, c->nranks);
    }
    if (kind == model::CollectiveKind::None) continue;
    model::Event& e = *l.kernel;
    if (e.coll == model::CollectiveKind::None || e.coll == model::CollectiveKind::Unknown) e.coll = kind;
    if (all_sized && bytes > 0) e.bytes = bytes;
    if (nranks > 0) e.group_size = nranks;
    if (one_peer && peer >= 0) l.peer = peer;
    if (one_comm) l.comm = comm;
    ++described;
  }
  return described;
}

}  // namespace shardscope::nsys
