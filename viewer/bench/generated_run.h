// The generated run both viewer benchmarks measure: 8 ranks, 10 million events (host ranges three deep, a
// compute stream, a communication stream whose collectives name one of 8 FSDP units), built in memory with
// no JSON.
#pragma once

#include <random>

#include "model/trace.h"

namespace shardscope::bench {

constexpr int kRanks = 8;
constexpr size_t kEventsPerRank = 10'000'000 / kRanks;

inline model::Rank make_rank(int r) {
  model::Rank rank;
  rank.rank = r;
  rank.world_size = kRanks;
  std::mt19937_64 rng(uint64_t(r) + 1);
  auto us = [&](int lo, int hi) { return int64_t(std::uniform_int_distribution<int>(lo, hi)(rng)) * 1000; };
  model::StringId op = rank.strings.intern("aten::linear"), mm = rank.strings.intern("aten::mm"),
                  launch = rank.strings.intern("cudaLaunchKernel"), gemm = rank.strings.intern("sm90_gemm_kernel"),
                  ag = rank.strings.intern("ncclDevKernel_AllGather_RING_LL"),
                  rs = rank.strings.intern("ncclDevKernel_ReduceScatter_RING_LL");
  model::Track host{.pid = r, .tid = 1, .name = "python", .kind = model::TrackKind::HostThread, .events = {}};
  model::Track compute{.pid = r, .tid = 7, .name = "stream 7", .kind = model::TrackKind::DeviceStream, .events = {}};
  model::Track comm{
      .pid = r, .tid = 20, .name = "stream 20 (nccl)", .kind = model::TrackKind::Communication, .events = {}};
  // Per group: host ranges three deep (an op, its inner op, two launches) and two kernels; every 16th group also a collective.
  int64_t t = 0, device_free = 0, comm_free = 0;
  size_t events = 0;
  for (size_t g = 0; events < kEventsPerRank; ++g) {
    int64_t d0 = us(20, 40);
    host.events.push_back({.ts_ns = t, .dur_ns = d0, .name = op});
    host.events.push_back({.ts_ns = t + 1000, .dur_ns = d0 - 3000, .name = mm});
    for (int k = 0; k < 2; ++k) {
      int64_t l = t + 2000 + k * 6000;
      host.events.push_back({.ts_ns = l, .dur_ns = 4000, .name = launch});
      int64_t start = std::max(device_free, l + 5000), dur = us(3, 40);
      compute.events.push_back(
          {.ts_ns = start, .dur_ns = dur, .issued_ns = l, .name = gemm, .cls = model::IntervalClass::Compute});
      device_free = start + dur + us(1, 3);
    }
    events += 6;
    if (g % 16 == 0) {
      int64_t start = std::max(comm_free, t), dur = us(100, 400);
      bool gather = (g / 16) % 2 == 0;
      // Each collective of one of 8 FSDP units in turn (an all-gather, then its reduce-scatter): the viewer's
      // FSDP units group gets a row per unit.
      comm.events.push_back({.ts_ns = start,
                             .dur_ns = dur,
                             .bytes = 64 << 20,
                             .name = gather ? ag : rs,
                             .unit = int32_t(1 + (g / 32) % 8),
                             .cls = model::IntervalClass::Communication,
                             .coll = gather ? model::CollectiveKind::AllGather : model::CollectiveKind::ReduceScatter});
      comm_free = start + dur;
      ++events;
    }
    t += d0 + us(1, 10);
  }
  rank.tracks.push_back(std::move(host));
  rank.tracks.push_back(std::move(compute));
  rank.tracks.push_back(std::move(comm));
  return rank;
}

inline const model::Trace& trace() {
  static const model::Trace t = [] {
    model::Trace tr;
    for (int r = 0; r < kRanks; ++r) tr.ranks.push_back(make_rank(r));
    return tr;
  }();
  return t;
}

}  // namespace shardscope::bench
