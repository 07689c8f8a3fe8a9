// NCCL's NVTX extended payloads: MARKER_DATA records carrying an nvtxPayloadData_t, decoded with schemas
// built in memory the way NCCL registers them (src/include/nvtx_payload_schemas.h: the payload is a C
// struct and each entry gives its offsetof). Each test spells out the exact args it expects on the range and
// on the kernel launched inside it.
#include <gtest/gtest.h>
#include <nvtx3/nvToolsExtPayload.h>

#include <cstddef>
#include <map>

#include "tests/cupti/records.h"
#include "tracer/cupti/nvtx_payload.h"
#include "tracer/cupti/record_processor.h"
#include "tracer/format/keys.h"
#include "tracer/format/serialize.h"

namespace shardscope::tracer::cupti {
namespace {

using json = nlohmann::json;
using test::Records;
using trace::Event;
using Entry = PayloadSchema::Entry;

constexpr int64_t kPayloadPid = 3;
constexpr uint32_t kDomain = 7;                                           // CUPTI's id for the "NCCL" domain
constexpr uint64_t kAllGather = NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + 4;  // NCCL's NVTX_SID_AllGather
constexpr uint64_t kAllReduce = NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + 5;
constexpr uint64_t kReduceScatter = NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + 7;
constexpr uint64_t kRedOp = NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + 11;  // NVTX_PAYLOAD_ENTRY_NCCL_REDOP
constexpr uint32_t kThread = 500;

// NCCL's payload structs (ncclRedOp_t is an int-sized enum).
struct AllGatherParams {
  uint64_t comm;
  size_t bytes;
};
struct AllReduceParams {  // also ReduceScatter's
  uint64_t comm;
  size_t bytes;
  int op;
};
enum { kSum = 0, kProd = 1, kMax = 2 };

PayloadSchema static_schema(std::vector<Entry> entries, uint64_t size) {
  PayloadSchema s;
  s.type = NVTX_PAYLOAD_SCHEMA_TYPE_STATIC;
  s.static_size = size;
  s.entries = std::move(entries);
  return s;
}

const Entry kComm = {0, NVTX_PAYLOAD_ENTRY_TYPE_UINT64, "NCCL communicator ID", offsetof(AllReduceParams, comm)};
const Entry kBytes = {0, NVTX_PAYLOAD_ENTRY_TYPE_SIZE, "Message size [bytes]", offsetof(AllReduceParams, bytes)};
const Entry kOp = {0, kRedOp, "Reduction operation", offsetof(AllReduceParams, op)};

// Schemas by (domain, id), as CUPTI would answer; counts lookups and the payloads handed back.
class MemorySchemas : public SchemaSource {
 public:
  MemorySchemas() {
    schemas[{kDomain, kAllGather}] = static_schema({kComm, kBytes}, sizeof(AllGatherParams));
    schemas[{kDomain, kAllReduce}] = static_schema({kComm, kBytes, kOp}, sizeof(AllReduceParams));
    schemas[{kDomain, kReduceScatter}] = static_schema({kComm, kBytes, kOp}, sizeof(AllReduceParams));
    PayloadSchema redop;
    redop.is_enum = true;
    redop.enum_size = sizeof(int);
    redop.values = {{0, "Sum"}, {1, "Product"}, {2, "Max"}, {3, "Min"}, {4, "Avg"}};
    schemas[{kDomain, kRedOp}] = redop;
  }
  std::optional<PayloadSchema> lookup(uint32_t domain, uint64_t id) override {
    ++lookups;
    auto it = schemas.find({domain, id});
    if (it == schemas.end()) return std::nullopt;
    return it->second;
  }
  void release(const nvtxPayloadData_t* data) override { released.push_back(data); }

  std::map<std::pair<uint32_t, uint64_t>, PayloadSchema> schemas;
  int lookups = 0;
  std::vector<const nvtxPayloadData_t*> released;
};

using test::dump;

class NvtxPayloadTest : public ::testing::Test {
 protected:
  RecordProcessor make() {
    return RecordProcessor({.pid = kPayloadPid, .schemas = schemas}, [this](const std::string& name) {
      tracks.push_back(name);
      return uint32_t(100 + tracks.size() - 1);
    });
  }
  Event X(std::string name, std::string cat, int64_t tid, int64_t ts, int64_t dur, json args) {
    return {'X', std::move(name), std::move(cat), kPayloadPid, tid, ts, dur, "", std::move(args)};
  }
  Event flow(char ph, int64_t tid, int64_t ts, std::string id) {
    return {ph, keys::kFlowLaunch, keys::kCatFlow, kPayloadPid, tid, ts, 0, std::move(id), nullptr};
  }
  static json kargs(uint32_t corr, json extra) {
    json a = {{"device", 0},       {"stream", 20},       {"correlation", corr},
              {"grid", {0, 0, 0}}, {"block", {0, 0, 0}}, {"registers_per_thread", 0},
              {"shared_memory", 0}};
    a.update(extra);
    return a;
  }
  std::shared_ptr<MemorySchemas> schemas = std::make_shared<MemorySchemas>();
  std::vector<std::string> tracks;
};

TEST_F(NvtxPayloadTest, AllReduceBytesOpAndCommOnTheRangeAndOnItsKernel) {
  AllReduceParams params{0x1234abcd5678ef00, 1 << 20, kMax};
  nvtxPayloadData_t data{kAllReduce, sizeof params, &params};
  Records r;
  r.range(1, 100, 300, kThread, "ncclAllReduce", "NCCL");
  r.marker_ext_payload(1, kDomain, &data);
  r.api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, 41, kThread, 150, 200);
  r.kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 41, 0, 1, 20, 1000, 5000);
  RecordProcessor p = make();
  p.process(r.batch(/*reversed=*/true));
  const json payload = {{"nccl_comm", "0x1234abcd5678ef00"},
                        {"nccl_message_bytes", 1048576},
                        {"bytes", 1048576},  // all_reduce: NCCL's message size is the trainer's bytes
                        {"reduce_op", "max"}};
  json range = payload;
  range["domain"] = "NCCL";
  json kernel = payload;
  kernel.update({{"collective", "all_reduce"}, {"nccl_op", "ncclAllReduce"}});
  std::vector<Event> expected = {
      X("cuLaunchKernelEx", keys::kCatCudaDriver, 100, 150, 50, {{"correlation", 41}}),
      X("ncclAllReduce", keys::kCatNvtx, 101, 100, 200, range),
      X("ncclDevKernel_AllReduce_Sum_f32_RING_LL", keys::kCatComm, 102, 1000, 4000, kargs(41, kernel)),
      flow('s', 100, 150, "1"),
      flow('f', 102, 1000, "1"),
  };
  EXPECT_EQ(dump(p.take()), dump(expected));
  EXPECT_EQ(schemas->released, std::vector<const nvtxPayloadData_t*>{&data});  // freed once, in production
  EXPECT_EQ(schemas->lookups, 2);                                              // the schema and its enum
}

TEST_F(NvtxPayloadTest, AllGatherCommAndBytesReachAKernelThatComesInALaterBatch) {
  AllGatherParams params{42, 4096};
  nvtxPayloadData_t data{kAllGather, sizeof params, &params};
  Records ranges, launch;
  ranges.range(1, 100, 300, kThread, "ncclAllGather", "NCCL");
  ranges.marker_ext_payload(1, kDomain, &data);
  launch.api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, 51, kThread, 150, 200);
  launch.kernel("_Z31ncclDevKernel_AllGather_RING_LL24ncclDevKernelArgsStorageILm4096EE", 51, 0, 1, 20, 1000, 2000);
  RecordProcessor p = make();
  p.process(ranges.batch());
  // One rank's send size: not the trainer's all_gather bytes (the unsharded whole), so no "bytes".
  const json payload = {{"nccl_comm", "0x000000000000002a"}, {"nccl_message_bytes", 4096}};
  json range = payload;
  range["domain"] = "NCCL";
  EXPECT_EQ(dump(p.take()), dump({X("ncclAllGather", keys::kCatNvtx, 100, 100, 200, range)}));
  p.process(launch.batch());
  json kernel = payload;
  kernel.update({{"collective", "all_gather"}, {"nccl_op", "ncclAllGather"}});
  std::vector<Event> expected = {
      X("cuLaunchKernelEx", keys::kCatCudaDriver, 101, 150, 50, {{"correlation", 51}}),
      X("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", keys::kCatComm, 102, 1000, 1000,
        kargs(51, kernel)),
      flow('s', 101, 150, "1"),
      flow('f', 102, 1000, "1"),
  };
  EXPECT_EQ(dump(p.take()), dump(expected));
}

TEST_F(NvtxPayloadTest, UnknownSchemaAndNullPayloadsKeepTheRangeWithoutArgs) {
  AllReduceParams params{1, 8, kSum};
  nvtxPayloadData_t unknown{NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + 99, sizeof params, &params};
  nvtxPayloadData_t unknown_again = unknown;
  nvtxPayloadData_t no_blob{kAllGather, sizeof(AllGatherParams), nullptr};
  Records r;
  r.range(1, 100, 300, kThread, "ncclAllReduce", "NCCL");
  r.marker_ext_payload(1, kDomain, &unknown);
  r.range(2, 400, 500, kThread, "ncclAllReduce", "NCCL");
  r.marker_ext_payload(2, kDomain, &unknown_again);
  r.range(3, 600, 700, kThread, "ncclBroadcast", "NCCL");
  r.marker_ext_payload(3, kDomain, nullptr);  // CUPTI's pointer may be null
  r.range(4, 800, 900, kThread, "ncclAllGather", "NCCL");
  r.marker_ext_payload(4, kDomain, &no_blob);
  r.api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, 61, kThread, 150, 200);
  r.kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 61, 0, 1, 20, 1000, 2000);
  RecordProcessor p = make();
  p.process(r.batch());
  const json nccl = {{"domain", "NCCL"}};
  std::vector<Event> expected = {
      X("cuLaunchKernelEx", keys::kCatCudaDriver, 100, 150, 50, {{"correlation", 61}}),
      X("ncclAllReduce", keys::kCatNvtx, 101, 100, 200, nccl),
      X("ncclAllReduce", keys::kCatNvtx, 101, 400, 100, nccl),
      X("ncclBroadcast", keys::kCatNvtx, 101, 600, 100, nccl),
      X("ncclAllGather", keys::kCatNvtx, 101, 800, 100, nccl),
      X("ncclDevKernel_AllReduce_Sum_f32_RING_LL", keys::kCatComm, 102, 1000, 1000,
        kargs(61, {{"collective", "all_reduce"}, {"nccl_op", "ncclAllReduce"}})),
      flow('s', 100, 150, "1"),
      flow('f', 102, 1000, "1"),
  };
  EXPECT_EQ(dump(p.take()), dump(expected));
  EXPECT_EQ(schemas->lookups, 1);  // the unknown id is asked for once; a missing blob needs no schema
  EXPECT_EQ(schemas->released, (std::vector<const nvtxPayloadData_t*>{&unknown, &unknown_again, &no_blob}));
}

TEST_F(NvtxPayloadTest, ShortPayloadsAndSchemasReadOnlyTheEntriesInsideThem) {
  // A blob shorter than NCCL's struct: only the communicator (bytes 0-7) lies inside it. On the heap and
  // exactly 12 bytes, so a sanitizer build catches a read past it.
  AllReduceParams params{5, 1 << 20, kSum};
  const auto* bytes = reinterpret_cast<const uint8_t*>(&params);
  std::vector<uint8_t> twelve(bytes, bytes + 12);
  nvtxPayloadData_t short_blob{kAllReduce, twelve.size(), twelve.data()};
  // A schema declaring 16 bytes while its op entry sits at 16: the op is past the declared size.
  const uint64_t kShortSchema = NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + 20;
  schemas->schemas[{kDomain, kShortSchema}] = static_schema({kComm, kBytes, kOp}, 16);
  nvtxPayloadData_t short_schema{kShortSchema, sizeof params, &params};
  // Entries not read here (an unknown type, an array), an entry placed after them by alignment (so its
  // offset is unknowable), and one with its own offset, which is still read.
  struct Mixed {
    uint64_t mystery, counts;
    int root;
  } mixed{1, 2, 3};
  const uint64_t kMixed = NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + 21;
  schemas->schemas[{kDomain, kMixed}] =
      static_schema({{0, 999, "Mystery", 0},
                     {NVTX_PAYLOAD_ENTRY_FLAG_ARRAY_FIXED_SIZE, NVTX_PAYLOAD_ENTRY_TYPE_UINT64, "Counts", 8},
                     {0, NVTX_PAYLOAD_ENTRY_TYPE_SIZE, "Message size [bytes]", 0},
                     {0, NVTX_PAYLOAD_ENTRY_TYPE_INT, "Root", offsetof(Mixed, root)}},
                    sizeof mixed);
  nvtxPayloadData_t mixed_data{kMixed, sizeof mixed, &mixed};
  Records r;
  r.range(1, 100, 200, kThread, "ncclAllReduce", "NCCL");
  r.marker_ext_payload(1, kDomain, &short_blob);
  r.range(2, 300, 400, kThread, "ncclAllReduce", "NCCL");
  r.marker_ext_payload(2, kDomain, &short_schema);
  r.range(3, 500, 600, kThread, "ncclBroadcast", "NCCL");
  r.marker_ext_payload(3, kDomain, &mixed_data);
  RecordProcessor p = make();
  p.process(r.batch());
  std::vector<Event> expected = {
      X("ncclAllReduce", keys::kCatNvtx, 100, 100, 100, {{"domain", "NCCL"}, {"nccl_comm", "0x0000000000000005"}}),
      X("ncclAllReduce", keys::kCatNvtx, 100, 300, 100,
        {{"domain", "NCCL"}, {"nccl_comm", "0x0000000000000005"}, {"nccl_message_bytes", 1048576}, {"bytes", 1048576}}),
      X("ncclBroadcast", keys::kCatNvtx, 100, 500, 100, {{"domain", "NCCL"}, {"root", 3}}),
  };
  EXPECT_EQ(dump(p.take()), dump(expected));
  EXPECT_EQ(schemas->released.size(), 3u);
}

TEST_F(NvtxPayloadTest, AGroupsKernelGetsTheSummedBytesAndOnlyTheValuesItsCollectivesShare) {
  AllReduceParams first{9, 100, kSum}, second{9, 200, kProd};
  nvtxPayloadData_t d1{kReduceScatter, sizeof first, &first}, d2{kReduceScatter, sizeof second, &second};
  Records r;
  r.range(1, 400, 410, kThread, "ncclGroupStart", "NCCL");
  r.range(2, 420, 430, kThread, "ncclReduceScatter", "NCCL");
  r.marker_ext_payload(2, kDomain, &d1);
  r.range(3, 440, 450, kThread, "ncclReduceScatter", "NCCL");
  r.marker_ext_payload(3, kDomain, &d2);
  r.range(4, 460, 600, kThread, "ncclGroupEnd", "NCCL");
  r.api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, 71, kThread, 500, 550);
  r.kernel("_Z21ncclDevKernel_Generic24ncclDevKernelArgsStorageILm4096EE", 71, 0, 1, 20, 6000, 9000);
  RecordProcessor p = make();
  p.process(r.batch());
  std::vector<Event> events = p.take();
  ASSERT_FALSE(events.empty());
  const Event& kernel = events[events.size() - 3];  // then the flow's two ends
  ASSERT_EQ(kernel.cat, keys::kCatComm);
  EXPECT_EQ(kernel.args, kargs(71, {{"collective", "reduce_scatter"},
                                    {"nccl_op", "ncclReduceScatter"},
                                    {"nccl_group_ops", 2},
                                    {"nccl_message_bytes", 300},
                                    {"nccl_comm", "0x0000000000000009"}}));  // "sum" and "product": no op
}

TEST(PayloadDecoder, EntriesWithoutOffsetsFollowNaturalAlignmentAndEnumsWithoutANameStayNumbers) {
  struct Auto {
    int8_t a;
    int32_t b;
    uint16_t c;
    int op;
    double d;
  } value{-3, -70000, 65535, 9, 0.25};
  auto schemas = std::make_shared<MemorySchemas>();
  const uint64_t kAuto = NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + 30;
  PayloadSchema s = static_schema({{0, NVTX_PAYLOAD_ENTRY_TYPE_INT8, "a", 0},
                                   {0, NVTX_PAYLOAD_ENTRY_TYPE_INT32, "b", 0},
                                   {0, NVTX_PAYLOAD_ENTRY_TYPE_UINT16, "c", 0},
                                   {0, kRedOp, "op", 0},
                                   {0, NVTX_PAYLOAD_ENTRY_TYPE_DOUBLE, "d", 0}},
                                  0);  // no declared size: the blob's size bounds the read
  schemas->schemas[{kDomain, kAuto}] = s;
  nvtxPayloadData_t data{kAuto, sizeof value, &value};
  PayloadDecoder decoder(schemas);
  EXPECT_EQ(decoder.decode(kDomain, &data), (json{{"a", -3}, {"b", -70000}, {"c", 65535}, {"op", 9}, {"d", 0.25}}));
  EXPECT_EQ(decoder.decode(kDomain + 1, &data), json::object());  // schemas belong to their domain
  EXPECT_EQ(schemas->released.size(), 2u);
}

}  // namespace
}  // namespace shardscope::tracer::cupti
