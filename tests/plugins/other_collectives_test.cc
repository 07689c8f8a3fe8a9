// Collectives that are not NCCL kernels are communication, not compute: known kernel names (symmetric memory,
// custom all-reduce, NVSHMEM, MSCCL) and any kernel a known collective op launched, with bytes from the op's
// input where nccl-tests counts the input. HTA-compatible numbers still follow HTA's own rule.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "analyzer/metrics/breakdown.h"
#include "analyzer/metrics/collectives.h"
#include "model/classify.h"
#include "plugins/load/load.h"
#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;
using namespace shardscope;
using model::CollectiveKind;
using model::IntervalClass;

namespace {

// Every device event by name, loaded with args dropped (report) or kept (viewer): both read the op's input.
std::map<std::string, const model::Event*> by_name(const model::Rank& r) {
  std::map<std::string, const model::Event*> out;
  for (const auto& t : r.tracks)
    for (const auto& e : t.events)
      if (e.is_device()) out[std::string(r.str(e.name))] = &e;
  return out;
}

model::Rank load_text(const std::string& text, bool keep_args) {
  test::TempDir d;
  std::ofstream(d.path() / "t.json", std::ios::binary) << text;
  plugins::LoadOptions o;
  o.keep_args = keep_args;
  plugins::LoadResult r = plugins::load({d.path() / "t.json"}, o);
  EXPECT_EQ(r.trace.ranks.size(), 1u);
  return std::move(r.trace.ranks.at(0));
}

TEST(OtherCollectives, KernelNamesOfSymmetricMemoryCustomAllReduceNvshmemAndMsccl) {
  using model::other_collective_kernel;
  EXPECT_EQ(
      other_collective_kernel(
          "void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*, unsigned long)"),
      CollectiveKind::AllReduce);
  EXPECT_EQ(other_collective_kernel("void c10d::symmetric_memory::multimem_all_gather_kernel<16>(...)"),
            CollectiveKind::AllGather);
  EXPECT_EQ(other_collective_kernel("multimem_one_shot_reduce_kernel"), CollectiveKind::Reduce);
  EXPECT_EQ(other_collective_kernel("void one_shot_all_reduce_kernel<float, 8>(...)"), CollectiveKind::AllReduce);
  EXPECT_EQ(other_collective_kernel("two_shot_all_reduce_kernel_0d1d2d"), CollectiveKind::AllReduce);
  EXPECT_EQ(other_collective_kernel("void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, ...)"),
            CollectiveKind::AllReduce);
  EXPECT_EQ(other_collective_kernel("void sglang::cross_device_reduce_2stage<half, 4>(...)"),
            CollectiveKind::AllReduce);
  EXPECT_EQ(other_collective_kernel("void nvshmemi_alltoall_threadgroup_kernel<int>(...)"), CollectiveKind::AllToAll);
  EXPECT_EQ(other_collective_kernel("nvshmemx_float_fcollect_block"), CollectiveKind::AllGather);
  EXPECT_EQ(other_collective_kernel("nvshmemi_float_sum_reduce_kernel"), CollectiveKind::AllReduce);
  EXPECT_EQ(other_collective_kernel("nvshmemi_put_signal_kernel"),
            CollectiveKind::None);  // data movement, no collective
  EXPECT_EQ(other_collective_kernel("mscclKernel_Sum_float_LL(...)"), CollectiveKind::Unknown);
  // Compute kernels stay compute.
  EXPECT_EQ(other_collective_kernel("void at::native::reduce_kernel<512, 1>(...)"), CollectiveKind::None);
  EXPECT_EQ(other_collective_kernel("void cutlass::Kernel2<...all_reduce_epilogue...>"), CollectiveKind::None);
  EXPECT_EQ(model::classify_device_name("void one_shot_all_reduce_kernel<float, 8>(...)"),
            IntervalClass::Communication);
  EXPECT_EQ(model::hta_device_class("void one_shot_all_reduce_kernel<float, 8>(...)"),
            IntervalClass::Compute);  // HTA's rule
  EXPECT_EQ(model::collective_from_kernel_name("void one_shot_all_reduce_kernel<float, 8>(...)"),
            CollectiveKind::AllReduce);
}

TEST(OtherCollectives, LaunchingOpsOfC10dFunctionalSymmetricMemoryAndVllm) {
  using model::collective_from_launching_op;
  EXPECT_EQ(collective_from_launching_op("c10d::allreduce_"), CollectiveKind::AllReduce);
  EXPECT_EQ(collective_from_launching_op("c10d::_allgather_base_"), CollectiveKind::AllGather);
  EXPECT_EQ(collective_from_launching_op("_c10d_functional::reduce_scatter_tensor"), CollectiveKind::ReduceScatter);
  EXPECT_EQ(collective_from_launching_op("_c10d_functional::all_to_all_single"), CollectiveKind::AllToAll);
  EXPECT_EQ(collective_from_launching_op("symm_mem::multimem_all_reduce_"), CollectiveKind::AllReduce);
  EXPECT_EQ(collective_from_launching_op("symm_mem::multimem_one_shot_all_reduce_out"), CollectiveKind::AllReduce);
  EXPECT_EQ(collective_from_launching_op("symm_mem::two_shot_all_reduce_"), CollectiveKind::AllReduce);
  EXPECT_EQ(collective_from_launching_op("vllm::all_reduce"), CollectiveKind::AllReduce);
  EXPECT_EQ(collective_from_launching_op("_C_custom_ar::all_reduce"), CollectiveKind::AllReduce);
  // Ops of those libraries that are no collective, and ops of other libraries.
  EXPECT_EQ(collective_from_launching_op("vllm::unified_attention_with_output"), CollectiveKind::None);
  EXPECT_EQ(collective_from_launching_op("_c10d_functional::wait_tensor"), CollectiveKind::None);
  EXPECT_EQ(collective_from_launching_op("aten::all"), CollectiveKind::None);
  EXPECT_EQ(collective_from_launching_op("my_lib::all_reduce"), CollectiveKind::None);
}

// A trace without a single NCCL kernel: each collective is found by its kernel's name or its launching op.
const char* kConstructed = R"J({"traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "_c10d_functional::all_reduce_", "pid": 1, "tid": 1, "ts": 1, "dur": 3,
   "args": {"External id": 7, "Input Dims": [[1024, 3], []], "Input type": ["float", ""]}},
  {"ph": "X", "cat": "kernel", "name": "triton_red_fused_all_reduce_0", "pid": 0, "tid": 7, "ts": 10, "dur": 4, "args": {"stream": 7, "External id": 7}},
  {"ph": "X", "cat": "cpu_op", "name": "symm_mem::multimem_all_gather_out", "pid": 1, "tid": 1, "ts": 5, "dur": 3,
   "args": {"External id": 8, "Input Dims": [[64]], "Input type": ["c10::BFloat16"]}},
  {"ph": "X", "cat": "kernel", "name": "void multimem_all_gather_kernel<16>(x)", "pid": 0, "tid": 7, "ts": 20, "dur": 2, "args": {"stream": 7, "External id": 8}},
  {"ph": "X", "cat": "kernel", "name": "void vllm::cross_device_reduce_1stage<half, 8>(x)", "pid": 0, "tid": 7, "ts": 30, "dur": 3, "args": {"stream": 7}},
  {"ph": "X", "cat": "cpu_op", "name": "vllm::unified_attention", "pid": 1, "tid": 1, "ts": 9, "dur": 3,
   "args": {"External id": 9, "Input Dims": [[8, 8]], "Input type": ["float"]}},
  {"ph": "X", "cat": "kernel", "name": "flash_fwd_kernel", "pid": 0, "tid": 7, "ts": 40, "dur": 6, "args": {"stream": 7, "External id": 9}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoD (Device -> Device)", "pid": 0, "tid": 7, "ts": 50, "dur": 1, "args": {"stream": 7, "External id": 7}}
]})J";

void expect_constructed(const model::Rank& r) {
  auto ev = by_name(r);
  ASSERT_EQ(ev.size(), 5u);
  // A kernel whose name says nothing, launched by a functional all-reduce: 1024 x 3 floats.
  const model::Event* ar = ev.at("triton_red_fused_all_reduce_0");
  EXPECT_EQ(ar->cls, IntervalClass::Communication);
  EXPECT_EQ(ar->coll, CollectiveKind::AllReduce);
  EXPECT_EQ(ar->bytes, 1024 * 3 * 4);
  // Symmetric memory's all-gather: communication, its size unknown (its op's input is one shard, not the
  // gathered output nccl-tests counts).
  const model::Event* ag = ev.at("void multimem_all_gather_kernel<16>(x)");
  EXPECT_EQ(ag->cls, IntervalClass::Communication);
  EXPECT_EQ(ag->coll, CollectiveKind::AllGather);
  EXPECT_EQ(ag->bytes, model::kUnknown);
  // By name alone, with no op in the trace.
  const model::Event* custom = ev.at("void vllm::cross_device_reduce_1stage<half, 8>(x)");
  EXPECT_EQ(custom->cls, IntervalClass::Communication);
  EXPECT_EQ(custom->coll, CollectiveKind::AllReduce);
  // vLLM's attention op is no collective; a copy under a collective op stays a copy.
  EXPECT_EQ(ev.at("flash_fwd_kernel")->cls, IntervalClass::Compute);
  EXPECT_EQ(ev.at("Memcpy DtoD (Device -> Device)")->cls, IntervalClass::Memory);

  auto stats = metrics::collective_stats(r);
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[0].kind, CollectiveKind::AllGather);
  EXPECT_EQ(stats[0].count, 1);
  EXPECT_EQ(stats[1].kind, CollectiveKind::AllReduce);
  EXPECT_EQ(stats[1].count, 2);
  EXPECT_EQ(stats[1].time_ns, 7000);
  EXPECT_EQ(stats[1].sized_count, 1);
}

TEST(OtherCollectives, FoundByKernelNameOrLaunchingOpWithArgsDropped) {
  expect_constructed(load_text(kConstructed, false));
}
TEST(OtherCollectives, FoundByKernelNameOrLaunchingOpWithArgsKept) {
  expect_constructed(load_text(kConstructed, true));
}

// An op whose input shape is malformed or overflows leaves the bytes unknown; the kernel is still the collective.
TEST(OtherCollectives, AnOddInputShapeLeavesTheBytesUnknown) {
  for (const char* dims : {R"("[[1024]]")", "[[9223372036854775807, 4]]", "[[-3]]", "[]", "[[1, 2"}) {
    std::string text = std::string(R"J({"traceEvents": [
      {"ph": "X", "cat": "cpu_op", "name": "c10d::allreduce_", "pid": 1, "tid": 1, "ts": 1, "dur": 3,
       "args": {"External id": 7, "Input Dims": )J") +
                       dims + R"J(, "Input type": ["float"]}},
      {"ph": "X", "cat": "kernel", "name": "some_kernel", "pid": 0, "tid": 7, "ts": 10, "dur": 4, "args": {"stream": 7, "External id": 7}}]})J";
    for (bool keep : {false, true}) {
      test::TempDir d;
      std::ofstream(d.path() / "t.json", std::ios::binary) << text;
      plugins::LoadOptions o;
      o.keep_args = keep;
      plugins::LoadResult r;
      try {
        r = plugins::load({d.path() / "t.json"}, o);
      } catch (const std::exception&) {
        continue;  // "[[1, 2" is malformed JSON: the file's error, tested elsewhere
      }
      auto ev = by_name(r.trace.ranks.at(0));
      ASSERT_EQ(ev.size(), 1u) << dims;
      EXPECT_EQ(ev.at("some_kernel")->cls, IntervalClass::Communication) << dims;
      EXPECT_EQ(ev.at("some_kernel")->bytes, model::kUnknown) << dims;
    }
  }
}

// TraceLens's B200 trace (vLLM, 8 x B200): 73 symmetric-memory all-reduces launched by
// symm_mem::multimem_all_reduce_ over bf16 inputs of 2,557,440 or 2,727,936 elements, beside one NCCL
// all-gather. The byte total was summed outside shardscope (Python's json over the file: each kernel's
// launching op by External id, the product of its first "Input Dims" x 2 bytes): 385,661,952.
TEST(OtherCollectives, TheB200TracesSymmetricMemoryAllReducesAreCommunication) {
  plugins::LoadResult loaded = plugins::load({fs::path(SHARDSCOPE_DATA_DIR) / "tracelens_b200/eager_trace.json.gz"});
  const model::Rank& r = loaded.trace.ranks.at(0);
  int64_t multimem = 0, multimem_ns = 0, multimem_bytes = 0;
  for (const auto& t : r.tracks)
    for (const auto& e : t.events)
      if (e.is_device() && r.str(e.name).find("multimem_all_reduce_kernel") != std::string_view::npos) {
        ++multimem;
        multimem_ns += e.dur_ns;
        EXPECT_EQ(e.cls, IntervalClass::Communication);
        EXPECT_EQ(e.coll, CollectiveKind::AllReduce);
        EXPECT_TRUE(e.bytes == 2557440 * 2 || e.bytes == 2727936 * 2) << e.bytes;
        multimem_bytes += e.bytes;
      }
  EXPECT_EQ(multimem, 73);
  EXPECT_EQ(multimem_bytes, 385661952);
  auto stats = metrics::collective_stats(r);
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[0].kind, CollectiveKind::AllGather);
  EXPECT_EQ(stats[0].count, 1);
  EXPECT_EQ(stats[1].kind, CollectiveKind::AllReduce);
  EXPECT_EQ(stats[1].count, 73);
  EXPECT_EQ(stats[1].time_ns, multimem_ns);
  EXPECT_EQ(stats[1].bytes, 385661952);
  // About 100 times the NCCL all-gather's time (2.12 ms against 22 µs), as TraceLens's own table shows.
  EXPECT_NEAR(double(multimem_ns) / 1e6, 2.12, 0.01);
  EXPECT_GT(multimem_ns, 90 * stats[0].time_ns);
  // The HTA-compatible breakdown still counts them as compute, as HTA does (hta_agreement_test pins it).
  auto b = metrics::hta_breakdown(r);
  ASSERT_TRUE(b.has_value());
  EXPECT_NEAR(b->compute_pct(), 12.02, 0.1);
}

}  // namespace
