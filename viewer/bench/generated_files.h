// The generated run of generated_run.h written as trace files, in the project's own format or as Kineto JSON,
// with args as the tracers write them: for measuring what opening files costs (viewer_open_memory) and for
// the tests that hold the viewer to its memory budget (tests/viewer/tst_viewer_memory.cc).
#pragma once

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace shardscope::bench {

// One rank's file: groups of six events (two nested host ranges, two launches, two kernels) and a collective
// every 16th group, until `events`.
inline void write_generated_rank(const std::filesystem::path& path, int rank, int ranks, size_t events, bool kineto) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw std::runtime_error("cannot write " + path.string());
  if (kineto)
    std::fprintf(f,
                 "{\"schemaVersion\": 1, \"distributedInfo\": {\"rank\": %d, \"world_size\": %d}, \"traceEvents\": [\n",
                 rank, ranks);
  else
    std::fprintf(f, "{\"shardscope\": {\"schema_version\": 1, \"rank\": %d, \"world_size\": %d}, \"traceEvents\": [\n",
                 rank, ranks);
  const int pid = kineto ? 4000 + rank : rank;
  double t = 1000, device_free = 0, comm_free = 0;
  long corr = 1;
  size_t n = 0;
  const char* sep = "";
  unsigned seed = unsigned(rank) * 7919u + 1;
  auto rnd = [&](int lo, int hi) { return lo + int((seed = seed * 1103515245u + 12345u) >> 16) % (hi - lo + 1); };
  for (size_t g = 0; n < events; ++g) {
    const double d0 = rnd(20, 40);
    std::fprintf(f,
                 "%s{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::linear\", \"pid\": %d, \"tid\": 1, \"ts\": "
                 "%.3f, \"dur\": %.3f, \"args\": {\"External id\": %zu}}",
                 sep, pid, t, d0, g);
    sep = ",\n";
    std::fprintf(f,
                 ",\n{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": %d, \"tid\": 1, \"ts\": "
                 "%.3f, \"dur\": %.3f, \"args\": {\"External id\": %zu}}",
                 pid, t + 1, d0 - 3, g);
    for (int k = 0; k < 2; ++k, ++corr) {
      const double l = t + 2 + k * 6;
      std::fprintf(f,
                   ",\n{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": %d, "
                   "\"tid\": 1, \"ts\": %.3f, \"dur\": 4.000, \"args\": {\"correlation\": %ld}}",
                   pid, l, corr);
      const double start = std::max(device_free, l + 5), dur = rnd(3, 40);
      std::fprintf(
          f,
          ",\n{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"sm90_gemm_kernel\", \"pid\": %d, \"tid\": 7, \"ts\": "
          "%.3f, \"dur\": %.3f, \"args\": {\"stream\": 7, \"correlation\": %ld, \"grid\": [132, 1, 1]}}",
          kineto ? 0 : pid, start, dur, corr);
      device_free = start + dur + rnd(1, 3);
    }
    n += 6;
    if (g % 16 == 0) {
      const double start = std::max(comm_free, t), dur = rnd(100, 400);
      const bool gather = (g / 16) % 2 == 0;
      std::fprintf(f,
                   ",\n{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": %d, \"tid\": 20, \"ts\": %.3f, "
                   "\"dur\": %.3f, \"args\": {\"stream\": 20, \"collective\": \"%s\", \"bytes\": 67108864}}",
                   kineto ? "kernel" : "comm",
                   gather ? "ncclDevKernel_AllGather_RING_LL" : "ncclDevKernel_ReduceScatter_RING_LL", kineto ? 0 : pid,
                   start, dur, gather ? "all_gather" : "reduce_scatter");
      comm_free = start + dur;
      ++n;
    }
    t += d0 + rnd(1, 10);
  }
  std::fprintf(f, "\n]}\n");
  std::fclose(f);
}

// `events` over `ranks` files in `dir` (created): trace.rankN.json, or rankN.pt.trace.json for Kineto.
inline void write_generated_run(const std::filesystem::path& dir, size_t events, int ranks, bool kineto) {
  std::filesystem::create_directories(dir);
  for (int r = 0; r < ranks; ++r)
    write_generated_rank(
        dir / (kineto ? "rank" + std::to_string(r) + ".pt.trace.json" : "trace.rank" + std::to_string(r) + ".json"), r,
        ranks, events / size_t(ranks), kineto);
}

}  // namespace shardscope::bench
