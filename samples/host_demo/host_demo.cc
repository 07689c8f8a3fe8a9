// A small program traced with the host tracer: a compute thread doing real matrix products in "units" and a
// communication thread copying buffers, with per-step ranges and memory counters. One process per rank.
//
//   shardscope-host-demo --rank 0 --world-size 2 --steps 5 --out trace.rank0.json.gz
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "tracer/tracer.h"

namespace tr = shardscope::tracer;

namespace {

void matmul(const std::vector<float>& a, const std::vector<float>& b, std::vector<float>& c, int n) {
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k) {
      float x = a[size_t(i) * n + k];
      for (int j = 0; j < n; ++j) c[size_t(i) * n + j] += x * b[size_t(k) * n + j];
    }
}

int usage(const char* msg) {
  std::fprintf(stderr,
               "shardscope-host-demo: %s\nusage: shardscope-host-demo --rank R --world-size N --steps S --out FILE\n",
               msg);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int rank = 0, world = 1, steps = 3;
  std::string out;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--rank") rank = std::atoi(argv[i + 1]);
    else if (k == "--world-size")
      world = std::atoi(argv[i + 1]);
    else if (k == "--steps")
      steps = std::atoi(argv[i + 1]);
    else if (k == "--out")
      out = argv[i + 1];
    else
      return usage(("unknown option " + k).c_str());
  }
  if (out.empty() || rank < 0 || world < 1 || rank >= world || steps < 1) return usage("bad arguments");

  constexpr int kUnits = 4, kN = 96;
  tr::start({.path = out,
             .rank = rank,
             .world_size = world,
             .run_config = {{"program", "host-demo"}, {"units", kUnits}, {"matrix", kN}}});
  tr::name_this_thread("compute");
  uint32_t comm_track = tr::track("comm (copy thread)");

  std::vector<float> a(kN * kN, 1.0f), b(kN * kN, 0.5f), c(kN * kN, 0.0f);
  std::vector<char> src(8 << 20, 'x'), dst(8 << 20);
  for (int step = 0; step < steps; ++step) {
    tr::Range step_range("step", {{"step", step}});
    // Communication on its own thread overlaps the compute below, as a prefetching all-gather would.
    std::thread comm([&] {
      int64_t t0 = tr::now_ns();
      for (int r = 0; r < 8; ++r) std::memcpy(dst.data(), src.data(), src.size());
      tr::complete(comm_track, "all_gather", "comm", t0, tr::now_ns(),
                   {{"bytes", int64_t(8 * src.size())}, {"group_size", world}});
    });
    for (int u = 0; u < kUnits; ++u) {
      tr::Range unit("forward", {{"unit", u}});
      matmul(a, b, c, kN);
      tr::counter("memory.activations", int64_t(u + 1) * kN * kN * 4);
    }
    comm.join();
    tr::instant("step_end", {{"step", step}});
  }
  tr::stop();
  std::printf("rank %d: wrote %s\n", rank, out.c_str());
  return 0;
}
