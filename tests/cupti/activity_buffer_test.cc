// Records laid out in an activity buffer as CUPTI delivers them, walked by libcupti's own
// cuptiActivityGetNextRecord (no GPU needed): it must find every record where our CUPTI 13.0 structs say
// they are, so the processor sees the same records whether handed pointers or a buffer.
#include "tracer/cupti/activity_buffer.h"

#include <gtest/gtest.h>

#include "tests/cupti/records.h"
#include "tracer/cupti/record_processor.h"
#include "tracer/format/serialize.h"

namespace shardscope::tracer::cupti {
namespace {

std::string events_from(std::span<const CUpti_Activity* const> records) {
  RecordProcessor p({}, [n = 0u](const std::string&) mutable { return ++n; });
  p.process(records);
  std::string out;
  for (const auto& e : p.take()) trace::append_event(out, e), out += "\n";
  return out;
}

TEST(ActivityBuffer, EveryKindWeEnableIsFoundWhereItsStructSaysAndProcessesTheSame) {
  test::Records r;
  r.external(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 99, 7);
  r.api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 7, 11, 100, 200);
  r.api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, 8, 11, 300, 400);
  r.kernel("_Z9vectorAddPfS_i", 7, 0, 1, 13, 1000, 2000).gridX = 3;
  r.kernel("_Z21ncclDevKernel_Generic24ncclDevKernelArgsStorageILm4096EE", 8, 0, 1, 14, 1500, 2500);
  r.memcpy(CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, 64, 9, 0, 13, 2100, 2200);
  r.memset(1, 32, 10, 0, 13, 2300, 2400);
  r.range(1, 250, 450, 11, "ncclAllReduce", "NCCL");
  r.marker_data(1).category = 2;
  r.memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, 0, 0x100, 4096, 50);
  r.sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, 1, CUPTI_SYNCHRONIZATION_INVALID_VALUE, 12, 500, 600);
  r.overhead(CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL, 11, 700, 800);

  std::vector<uint64_t> buffer = r.pack();
  std::vector<const CUpti_Activity*> read;
  EXPECT_EQ(read_buffer(reinterpret_cast<uint8_t*>(buffer.data()), r.packed_bytes(), read), "");
  std::vector<const CUpti_Activity*> direct = r.batch();
  ASSERT_EQ(read.size(), direct.size());
  for (size_t i = 0; i < read.size(); ++i) EXPECT_EQ(read[i]->kind, direct[i]->kind) << "record " << i;
  std::string from_buffer = events_from(read);
  EXPECT_EQ(from_buffer, events_from(direct));
  EXPECT_NE(from_buffer.find("\"collective\":\"all_reduce\""), std::string::npos) << from_buffer;
}

TEST(ActivityBuffer, AnEmptyBufferHasNoRecords) {
  uint64_t buffer[4] = {};
  std::vector<const CUpti_Activity*> read;
  EXPECT_EQ(read_buffer(reinterpret_cast<uint8_t*>(buffer), 0, read), "");
  EXPECT_TRUE(read.empty());
}

}  // namespace
}  // namespace shardscope::tracer::cupti
