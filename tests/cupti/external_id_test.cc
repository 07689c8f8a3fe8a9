// The trainer's collectives tagged with their identity through CUPTI external correlation
// (tracer/cupti/external_id.h): the id pushed around the NCCL call reaches the kernel's event as
// external_id, and the importer joins that kernel to the host collective carrying the same id, whatever
// thread launched it and whenever. No GPU here: CUPTI's records are synthetic (records.h), the push and
// pop go to the real libcupti.
#include <gtest/gtest.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <thread>

#include "plugins/load/load.h"
#include "tests/cupti/records.h"
#include "tests/support/temp_dir.h"
#include "tracer/cupti/external_id.h"
#include "tracer/cupti/record_processor.h"
#include "tracer/format/keys.h"
#include "tracer/tracer.h"

namespace shardscope::tracer::cupti {
namespace {

using json = nlohmann::json;
using test::Records;

const char* kAllGatherKernel = "_Z31ncclDevKernel_AllGather_RING_LL24ncclDevKernelArgsStorageILm4096EE";

const trace::Event* kernel_with(const std::vector<trace::Event>& events, uint32_t correlation) {
  for (const trace::Event& e : events)
    if (e.ph == 'X' && e.args.is_object() && e.args.value(keys::kArgCorrelation, 0u) == correlation &&
        e.args.contains(keys::kArgStream))
      return &e;
  return nullptr;
}

TEST(ExternalId, ReachesTheKernelsOfTheTaggedLaunchInAnyBatchOrder) {
  RecordProcessor p({}, [](const std::string&) { return 1u; });
  Records first;
  // The launch and its external id in one batch, its kernel in the next (it ran later).
  first.external(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 1'234'567'890'123, 9);
  first.api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, 9, 77, 100, 150);
  // In one batch, a kernel before the external record of its launch: the order within a batch is CUPTI's.
  first.kernel(kAllGatherKernel, 10, 0, 1, 13, 400, 500);
  first.external(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 42, 10);
  first.api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, 10, 77, 200, 250);
  // Untagged.
  first.api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, 11, 77, 300, 350);
  first.kernel(kAllGatherKernel, 11, 0, 1, 13, 600, 700);
  p.process(first.batch());
  std::vector<trace::Event> events = p.take();
  Records second;
  second.kernel(kAllGatherKernel, 9, 0, 1, 13, 1000, 5000);
  p.process(second.batch());
  for (trace::Event& e : p.take()) events.push_back(std::move(e));

  for (auto [corr, id] : {std::pair<uint32_t, int64_t>{9, 1'234'567'890'123}, {10, 42}}) {
    const trace::Event* k = kernel_with(events, corr);
    ASSERT_TRUE(k) << corr;
    EXPECT_EQ(k->cat, keys::kCatComm);
    EXPECT_EQ(k->args.value(keys::kArgExternalKind, -1), keys::kExternalKindTrainerCollective) << k->args.dump();
    EXPECT_EQ(k->args.value(keys::kArgExternalId, int64_t(-1)), id) << k->args.dump();
  }
  const trace::Event* untagged = kernel_with(events, 11);
  ASSERT_TRUE(untagged);
  EXPECT_FALSE(untagged->args.contains(keys::kArgExternalId)) << untagged->args.dump();
}

// From the tracer's file to the analyzer's model: the trainer's host collective (issued_ns = the id it
// pushed) and a kernel tagged with that id but launched on another thread, outside the host range, so the
// thread-and-correlation join cannot claim it: only the id joins them.
TEST(ExternalId, JoinsTheKernelToItsHostCollectiveThroughTheFile) {
  test::TempDir dir;
  auto path = dir.path() / "trace.rank0.json";
  tracer::start({.path = path, .rank = 0, .world_size = 2});
  const int64_t issued = now_ns();
  std::thread comm([&] {
    tracer::name_this_thread("comm: all-gather");
    int64_t start = now_ns();
    tracer::complete(0, keys::kAllGather, keys::kCatComm, start, start + 1'000'000,
                     {{keys::kArgUnit, int64_t(3)},
                      {keys::kArgBytes, int64_t(8192)},
                      {keys::kArgGroupSize, 2},
                      {keys::kArgIssuedNs, issued}});
  });
  comm.join();
  Records r;
  r.external(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, uint64_t(issued), 9);
  r.api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, 9, 4242, 10, 20);
  r.kernel(kAllGatherKernel, 9, 0, 1, 13, 2'000'000, 3'000'000);
  RecordProcessor p({}, [](const std::string& name) { return tracer::track(name); });
  p.set_clock_offset(issued);
  p.process(r.batch());
  tracer::emit(p.take());
  tracer::stop();

  plugins::LoadResult loaded = plugins::load({path});
  const model::Rank& rank = loaded.trace.ranks.at(0);
  const model::Event* kernel = nullptr;
  for (const auto& t : rank.tracks)
    for (const auto& e : t.events)
      if (e.cls == model::IntervalClass::Communication) kernel = &e;
  ASSERT_TRUE(kernel);
  EXPECT_EQ(kernel->unit, 3);
  EXPECT_EQ(kernel->bytes, 8192);
  EXPECT_EQ(kernel->group_size, 2);
  EXPECT_EQ(kernel->issued_ns, issued);
}

TEST(ExternalId, PushesNothingWhileGpuTracingIsOff) {
  ExternalId tag(7);
  EXPECT_FALSE(tag.pushed());
}

// The push and pop against the real libcupti, as the backend turns them on once CUPTI tracing runs: the
// scope leaves CUPTI's per-thread stack as it found it.
TEST(ExternalId, PopsWhatItPushed) {
  detail::set_external_ids_on(true);
  {
    ExternalId tag(7);
    if (!tag.pushed()) {
      detail::set_external_ids_on(false);
      GTEST_SKIP() << "libcupti refused the push (without a GPU it answers 999, CUPTI_ERROR_UNKNOWN)";
    }
  }
  detail::set_external_ids_on(false);
  uint64_t last = 0;
  EXPECT_EQ(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last),
            CUPTI_ERROR_QUEUE_EMPTY);
  // And a push the scope did not make stays for its owner.
  ASSERT_EQ(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 5), CUPTI_SUCCESS);
  {
    detail::set_external_ids_on(true);
    ExternalId inner(6);
    detail::set_external_ids_on(false);
  }
  EXPECT_EQ(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last), CUPTI_SUCCESS);
  EXPECT_EQ(last, 5u);
}

}  // namespace
}  // namespace shardscope::tracer::cupti
