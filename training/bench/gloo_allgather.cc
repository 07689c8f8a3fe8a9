// The yardstick for the trainer's all-gathers: a raw Gloo all-gather of a given size between the ranks
// started by `shardscope launch`, with nothing else running. Prints the median time and bus bandwidth.
//
//   shardscope launch -n 2 -- shardscope-gloo-allgather --mib-per-rank 32
#include <CLI/CLI.hpp>
#include <algorithm>
#include <memory>
#include <chrono>
#include <cstdio>
#include <vector>

#include "training/comm/group.h"
#include "training/comm/rendezvous.h"

using namespace shardscope::train;

int main(int argc, char** argv) {
  double mib = 32;
  int iters = 10, warmup = 2;
  bool fresh = false;
  CLI::App app{"Raw Gloo all-gather timing"};
  app.add_option("--mib-per-rank", mib, "Input size per rank, MiB")->check(CLI::PositiveNumber);
  app.add_option("--iters", iters, "Timed iterations")->check(CLI::PositiveNumber);
  app.add_flag("--fresh-output", fresh,
               "A newly allocated output buffer each time, as a freed-and-regathered flat parameter");
  CLI11_PARSE(app, argc, argv);
  try {
    WorldEnv env = read_world_env();
    Rendezvous rv(env, std::chrono::seconds(60));
    std::vector<int> all;
    for (int r = 0; r < env.world_size; ++r) all.push_back(r);
    auto g = make_gloo_group(rv, "bench", all, std::chrono::seconds(60));
    size_t count = size_t(mib * (1 << 20) / 4);
    std::vector<float> in(count, float(env.rank)), out(count * size_t(env.world_size));
    std::vector<double> ms;
    for (int i = 0; i < warmup + iters; ++i) {
      std::unique_ptr<float[]> fresh_out;
      if (fresh) fresh_out.reset(new float[out.size()]);  // untouched pages, as torch::empty gives
      auto t0 = std::chrono::steady_clock::now();
      g->all_gather(fresh ? fresh_out.get() : out.data(), in.data(), count, DType::F32);
      double t = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (i >= warmup) ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    double med = ms[ms.size() / 2];
    double out_bytes = double(count) * 4 * env.world_size;
    double algbw = out_bytes / (med / 1e3) / 1e9;
    double busbw = algbw * (env.world_size - 1) / env.world_size;
    if (env.rank == 0)
      std::printf(
          "raw gloo all_gather: %.1f MiB per rank, %d ranks: median %.1f ms, algbw %.2f GB/s, busbw %.2f GB/s\n", mib,
          env.world_size, med, algbw, busbw);
    std::fflush(stdout);
    std::_Exit(0);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "shardscope-gloo-allgather: error: %s\n", e.what());
    return 2;
  }
}
