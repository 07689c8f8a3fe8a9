// Per rank, the bytes the trainer holds for parameters, gradients and optimizer state are SPEC's ZeRO
// formula for its stage, exactly, padding included. In fp32 with AdamW (p = g = 4 bytes, moments 8 bytes):
//   stage 0  no_shard       params 4P           grads 4P     optimizer 8P
//   stage 1  zero1          params 4P + 4P/N    grads 4P     optimizer 8P/N   (fp32 master shard: K = 12)
//   stage 2  shard_grad_op  params 4P + 4P/N    grads 4P/N   optimizer 8P/N   (full params during compute)
//   stage 3  full_shard     params 4P/N         grads 4P/N   optimizer 8P/N   (+ units in use)
// where P counts each unit's flat parameter padded to a multiple of N, the sharding group size.
#include <gtest/gtest.h>

#include "tests/training/ranks.h"
#include "tracer/format/reader.h"

namespace shardscope::test {
namespace {

struct Expect {
  int64_t sharded, unsharded_end, unsharded_peak, grads, optim, host_offloaded = 0;
};

// Units of the tiny preset: root (embedding, final norm, head) and 4 blocks, in elements.
constexpr int64_t kRoot = 256 * 128 * 2 + 128;
constexpr int64_t kBlock = 128 * 2 + 4 * 128 * 128 + 3 * 128 * 344;

int64_t padded(int64_t n, int64_t group) { return (n + group - 1) / group * group; }

void check(const std::string& sharding, int world, int group, const Expect& e,
           const std::vector<std::string>& extra = {}) {
  TempDir dir;
  std::vector<std::string> args = {"--preset",     "tiny",
                                   "--steps",      "2",
                                   "--batch-size", "1",
                                   "--sharding",   sharding,
                                   "--log-json",   (dir.path() / "log.{rank}.json").string(),
                                   "--trace-dir",  dir.path().string()};
  if (sharding == "hybrid_shard") args.insert(args.end(), {"--ranks-per-node", std::to_string(group)});
  args.insert(args.end(), extra.begin(), extra.end());
  auto ranks = run_ranks(world, args, dir.path());
  for (int r = 0; r < world; ++r) {
    ASSERT_EQ(ranks[size_t(r)].rc, 0) << ranks[size_t(r)].stderr_text();
    auto log = read_log(dir.path() / ("log." + std::to_string(r) + ".json"));
    ASSERT_EQ(log.size(), 2u);
    const auto& end = log[1]["end_bytes"];
    const auto& peak = log[1]["peak_bytes"];
    EXPECT_EQ(end["sharded_params"], e.sharded) << sharding << " rank " << r;
    EXPECT_EQ(end["unsharded_params"], e.unsharded_end) << sharding << " rank " << r;
    EXPECT_EQ(peak["unsharded_params"], e.unsharded_peak) << sharding << " rank " << r;
    EXPECT_EQ(end["gradients"], e.grads) << sharding << " rank " << r;
    EXPECT_EQ(end["optimizer_state"], e.optim) << sharding << " rank " << r;
    EXPECT_EQ(end["host_offloaded"], e.host_offloaded) << sharding << " rank " << r;
    // The trace's counters say the same as the log.
    auto f = trace::read_trace(dir.path() / ("trace.rank" + std::to_string(r) + ".json.gz"));
    int64_t last_grads = 0, last_host = 0;  // a counter that never leaves zero is never written
    for (const auto& ev : f.events) {
      if (ev.ph == 'C' && ev.name == "memory.gradients") last_grads = ev.args["value"];
      if (ev.ph == 'C' && ev.name == "memory.host_offloaded") last_host = ev.args["value"];
    }
    EXPECT_EQ(last_grads, e.grads);
    EXPECT_EQ(last_host, e.host_offloaded);
  }
}

TEST(ZeroMemory, Stage0NoShard) {
  const int64_t P = kRoot + 4 * kBlock;
  check("no_shard", 2, 1, {4 * P, 0, 0, 4 * P, 8 * P});
}

TEST(ZeroMemory, Stage1Zero1) {
  const int N = 2;
  const int64_t P = padded(kRoot, N) + 4 * padded(kBlock, N);
  check("zero1", N, N, {4 * P / N, 4 * P, 4 * P, 4 * P, 8 * P / N});
}

TEST(ZeroMemory, Stage2ShardGradOp) {
  const int N = 4;
  const int64_t P = padded(kRoot, N) + 4 * padded(kBlock, N);
  // Full parameters live from each unit's forward to its backward, then go.
  check("shard_grad_op", N, N, {4 * P / N, 0, 4 * P, 4 * P / N, 8 * P / N});
}

TEST(ZeroMemory, Stage3FullShard) {
  const int N = 4;
  const int64_t P = padded(kRoot, N) + 4 * padded(kBlock, N);
  // At most the root and limit_all_gathers (2) blocks are unsharded at once.
  const int64_t peak = 4 * (padded(kRoot, N) + 2 * padded(kBlock, N));
  check("full_shard", N, N, {4 * P / N, 0, peak, 4 * P / N, 8 * P / N});
}

TEST(ZeroMemory, HybridShardUsesTheNodeAsGroup) {
  const int N = 2;  // 4 ranks as 2 nodes x 2
  const int64_t P = padded(kRoot, N) + 4 * padded(kBlock, N);
  const int64_t peak = 4 * (padded(kRoot, N) + 2 * padded(kBlock, N));
  check("hybrid_shard", 4, N, {4 * P / N, 0, peak, 4 * P / N, 8 * P / N});
}

// --cpu-offload moves the fp32 shard, the gradient shard and both AdamW moments to the host: the training
// device keeps only the unsharded parameters of the units in use (the host is both here; see
// equivalence_test's CpuOffload).
TEST(ZeroMemory, Stage3FullShardCpuOffload) {
  setenv("SHARDSCOPE_TRAIN_OFFLOAD_ON_CPU", "1", 1);
  const int N = 2;
  const int64_t P = padded(kRoot, N) + 4 * padded(kBlock, N);
  const int64_t peak = 4 * (padded(kRoot, N) + 2 * padded(kBlock, N));
  check("full_shard", N, N, {0, 0, peak, 0, 0, 4 * P / N + 4 * P / N + 8 * P / N}, {"--cpu-offload"});
  unsetenv("SHARDSCOPE_TRAIN_OFFLOAD_ON_CPU");
}

// Activations are measured on the allocator: what each block's forward leaves for its backward. Without
// checkpointing a block keeps far more than its output (autograd's saved tensors); with checkpointing only
// the block boundaries stay, plus one recomputed block at a time; after each step nothing is left.
TEST(ActivationMemory, MeasuredPerBlockAndReleasedByBackward) {
  auto peak_and_end = [](bool checkpointing) {
    TempDir dir;
    std::vector<std::string> args = {
        "--preset", "tiny",       "--steps",    "2",          "--batch-size",
        "2",        "--sharding", "full_shard", "--log-json", (dir.path() / "log.json").string()};
    if (checkpointing) args.push_back("--activation-checkpointing");
    auto ranks = run_ranks(2, args, dir.path());
    EXPECT_EQ(ranks[0].rc, 0) << ranks[0].stderr_text();
    auto log = read_log(dir.path() / "log.json");
    EXPECT_EQ(log.size(), 2u);
    return std::pair<int64_t, int64_t>{log.back()["peak_bytes"]["activations"], log.back()["end_bytes"]["activations"]};
  };
  const int64_t boundary = 64 * 2 * 128 * 4;  // one block's output: seq 64 x batch 2 x dim 128, fp32
  const auto [full, full_end] = peak_and_end(false);
  const auto [ckpt, ckpt_end] = peak_and_end(true);
  EXPECT_EQ(full_end, 0);
  EXPECT_EQ(ckpt_end, 0);
  EXPECT_GT(full, 4 * 8 * boundary) << "4 blocks keep much more than their outputs";
  EXPECT_GE(ckpt, 4 * boundary) << "checkpointing keeps at least every block's output";
  EXPECT_LT(ckpt, full / 2) << "checkpointing keeps far less";
}

}  // namespace
}  // namespace shardscope::test

namespace shardscope::test {
namespace {

// "Measured" is a measurement: the ledger above adds up element counts where the trainer allocates and
// frees; here the CPU allocator itself counts, for every storage, the bytes the heap holds for it
// (malloc_usable_size) from its allocation to its free, under the category of the code that allocated it
// (SHARDSCOPE_TRAIN_COUNT_ALLOCATIONS=1, training/fsdp/allocator_count.h). A tensor the ledger forgets, one
// kept alive after the ledger let it go, a hidden copy or a wrong element size shows up as a difference.
//
// Tolerance: the heap rounds each request up (glibc: to its 16-byte chunk granularity, plus what a 64-byte
// aligned allocation leaves over, under 64 bytes a storage; AddressSanitizer reports the request itself), so
// the allocator's bytes are at least the ledger's and at most 64 bytes a tensor more (observed: 8 to 34 bytes
// a tensor). A category holds at most four tensors a unit (host_offloaded: master, gradient and both AdamW
// moments), so kSlack bounds it for the tiny preset's 5 units.
constexpr int64_t kUnits = 5, kSlack = 64 * 4 * kUnits;

struct AllocCase {
  std::string name, sharding;
  int world;
  std::vector<std::string> extra;
};

class AllocatorCounts : public ::testing::TestWithParam<AllocCase> {};

TEST_P(AllocatorCounts, LedgerBytesAreWhatTheAllocatorHolds) {
  const AllocCase& c = GetParam();
  setenv("SHARDSCOPE_TRAIN_COUNT_ALLOCATIONS", "1", 1);
  if (c.name.find("offload") != std::string::npos) setenv("SHARDSCOPE_TRAIN_OFFLOAD_ON_CPU", "1", 1);
  TempDir dir;
  std::vector<std::string> args = {
      "--preset", "tiny",       "--steps",  "2",          "--batch-size",
      "1",        "--sharding", c.sharding, "--log-json", (dir.path() / "log.{rank}.json").string()};
  args.insert(args.end(), c.extra.begin(), c.extra.end());
  auto ranks = run_ranks(c.world, args, dir.path());
  unsetenv("SHARDSCOPE_TRAIN_COUNT_ALLOCATIONS");
  unsetenv("SHARDSCOPE_TRAIN_OFFLOAD_ON_CPU");
  for (int r = 0; r < c.world; ++r) {
    ASSERT_EQ(ranks[size_t(r)].rc, 0) << ranks[size_t(r)].stderr_text();
    auto log = read_log(dir.path() / ("log." + std::to_string(r) + ".json"));
    ASSERT_EQ(log.size(), 2u);
    const auto& line = log[1];
    ASSERT_TRUE(line.contains("allocator_end_bytes")) << "the allocator was not counted";
    int64_t total = 0;
    for (const char* cat : {"sharded_params", "unsharded_params", "gradients", "optimizer_state", "host_offloaded"}) {
      const int64_t ledger = line["end_bytes"][cat], held = line["allocator_end_bytes"][cat];
      std::printf("rank %d %-17s ledger %9lld allocator %9lld (+%lld)\n", r, cat, (long long)ledger, (long long)held,
                  (long long)(held - ledger));
      EXPECT_GE(held, ledger) << cat << " rank " << r << ": the allocator holds less than the ledger says";
      EXPECT_LE(held, ledger + kSlack) << cat << " rank " << r << ": the allocator holds more than the ledger says";
      total += ledger;
    }
    // The full parameters' high-water mark within the step (full_shard: the root and the in-flight blocks).
    const int64_t ledger_peak = line["peak_bytes"]["unsharded_params"],
                  held_peak = line["allocator_peak_bytes"]["unsharded_params"];
    EXPECT_GE(held_peak, ledger_peak) << "rank " << r;
    EXPECT_LE(held_peak, ledger_peak + kSlack) << "rank " << r;
    // Nothing a block's forward kept is left at the end of the step, by either count.
    EXPECT_EQ(line["allocator_end_bytes"]["activations"], 0) << "rank " << r;
    // Everything else the allocator holds at the end of a step, outside every category: the step's leftovers
    // (none expected beyond a few small tensors); a category tensor allocated outside its tag would be here.
    const int64_t untagged = line["allocator_end_bytes"]["untagged"];
    std::printf("rank %d untagged at the end of the step: %lld bytes (categories %lld)\n", r, (long long)untagged,
                (long long)total);
    EXPECT_LE(untagged, 4096) << "rank " << r << ": bytes held outside every category";
    // Activations: the ledger takes them from glibc's in-use heap across each block's forward, which also
    // holds what autograd's graph allocates with plain malloc (its nodes and saved-variable records: no
    // tensor storage; observed 6 % above the storages in fp32, 10.5 % with bf16's half-size storages), while
    // the counter's peak also sees the block's transient storages, freed before its forward ends (with
    // checkpointing, where little else is kept: observed 5 % under the counter). Within 15 % either way;
    // this one cannot be exact.
    const int64_t act_ledger = line["peak_bytes"]["activations"],
                  act_held = line["allocator_peak_bytes"]["activations"];
    std::printf("rank %d activations peak: ledger %lld allocator %lld\n", r, (long long)act_ledger,
                (long long)act_held);
    EXPECT_GT(act_held, 0);
    EXPECT_NEAR(double(act_ledger), double(act_held), 0.15 * double(act_held)) << "rank " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Strategies, AllocatorCounts,
    ::testing::Values(AllocCase{"no_shard", "no_shard", 2, {}}, AllocCase{"zero1", "zero1", 2, {}},
                      AllocCase{"shard_grad_op", "shard_grad_op", 4, {}}, AllocCase{"full_shard", "full_shard", 4, {}},
                      AllocCase{"hybrid_shard", "hybrid_shard", 4, {"--ranks-per-node", "2"}},
                      AllocCase{
                          "full_shard_bf16", "full_shard", 2, {"--param-dtype", "bf16", "--reduce-dtype", "bf16"}},
                      AllocCase{"no_shard_bf16", "no_shard", 2, {"--param-dtype", "bf16"}},
                      AllocCase{"full_shard_checkpointing", "full_shard", 2, {"--activation-checkpointing"}},
                      AllocCase{"full_shard_offload", "full_shard", 2, {"--cpu-offload"}}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace shardscope::test
