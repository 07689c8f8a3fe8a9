// Also: a send/recv kernel's peer rank, kept as its arg "peer" (the model has no field for it).
// NCCL's NVTX payloads exported as binary (NVTX_EVENTS.binaryData) rather than JSON, read through the schema
// tables the export carries (NVTX_PAYLOAD_SCHEMAS / _ENTRIES, rows as a real 2026.2 export has them for NCCL's
// schemas: tests/data/nsys_2gpu). A database written here: one process whose all-reduce and send/recv
// kernels are launched inside NCCL's ranges with binary payloads.
#include <gtest/gtest.h>

#include <cstring>
#include <map>

#include <fmt/format.h>

#include "plugins/load/load.h"
#include "plugins/nsys/nsys_export.h"
#include "plugins/nsys/nvtx_schemas.h"
#include "tests/plugins/nsys_support.h"
#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;
using namespace shardscope;

namespace {

// NCCL's payload structs as their schemas lay them out: communicator id (u64) at 0, message size (size_t)
// at 8, then an int at 16 (peer for send/recv, the reduction op for all-reduce).
std::string payload(uint64_t comm, uint64_t bytes, int32_t third) {
  std::string b(24, '\0');
  std::memcpy(b.data(), &comm, 8);
  std::memcpy(b.data() + 8, &bytes, 8);
  std::memcpy(b.data() + 16, &third, 4);
  return b;
}

void write_payload_export(const fs::path& file, bool schemas) {
  test::Sql db(file, true);
  db.exec(
      "BEGIN;"
      "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
      "INSERT INTO StringIds VALUES (1, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)'), "
      "(2, 'ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)'), (3, 'cudaLaunchKernelExC_v11060');"
      "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT "
      "NULL, streamId INTEGER NOT NULL, "
      "correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL);"
      "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT "
      "NULL, globalTid INTEGER, "
      "correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL);"
      "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, text TEXT, globalTid "
      "INTEGER, textId INTEGER, "
      "domainId INTEGER, jsonText TEXT, binaryData TEXT);"
      "INSERT INTO NVTX_EVENTS (start, end, eventType, text, domainId) VALUES (0, NULL, 75, 'NCCL', 1);");
  if (schemas)
    db.exec(
        "CREATE TABLE NVTX_PAYLOAD_SCHEMAS (domainId INTEGER, schemaId INTEGER, name TEXT, type INTEGER, flags "
        "INTEGER, numEntries INTEGER, "
        "payloadSize INTEGER, alignTo INTEGER);"
        "CREATE TABLE NVTX_PAYLOAD_SCHEMA_ENTRIES (domainId INTEGER NOT NULL, schemaId INTEGER NOT NULL, idx INTEGER "
        "NOT NULL, flags INTEGER, "
        "type INTEGER, name TEXT, description TEXT, arrayOrUnionDetail INTEGER, offset INTEGER);"
        "INSERT INTO NVTX_PAYLOAD_SCHEMAS VALUES (1, 16777218, NULL, 1, NULL, 4, 24, NULL), (1, 16777223, NULL, 1, "
        "NULL, 3, 24, NULL),"
        "(1, 16777226, NULL, 1, NULL, 3, 24, NULL), (1, 16777225, NULL, 1, NULL, 3, 24, NULL), (1, 16777222, NULL, 1, "
        "NULL, 3, 24, NULL);"
        "INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES VALUES (1, 16777218, 0, NULL, 18, 'NCCL communicator ID', NULL, NULL, "
        "NULL),"
        "(1, 16777218, 1, NULL, 5, 'No. of ranks', NULL, NULL, 8), (1, 16777218, 2, NULL, 5, 'Rank', NULL, NULL, 12),"
        "(1, 16777223, 0, NULL, 18, 'NCCL communicator ID', NULL, NULL, NULL), (1, 16777223, 1, NULL, 22, 'Message "
        "size [bytes]', NULL, NULL, 8),"
        "(1, 16777223, 2, NULL, 16777232, 'Reduction operation', NULL, NULL, 16),"
        "(1, 16777226, 0, NULL, 18, 'NCCL communicator ID', NULL, NULL, NULL), (1, 16777226, 1, NULL, 22, 'Message "
        "size [bytes]', NULL, NULL, 8),"
        "(1, 16777226, 2, NULL, 5, 'Peer rank', NULL, NULL, 16),"
        "(1, 16777225, 0, NULL, 18, 'NCCL communicator ID', NULL, NULL, NULL), (1, 16777225, 1, NULL, 22, 'Message "
        "size [bytes]', NULL, NULL, 8),"
        "(1, 16777225, 2, NULL, 5, 'Peer rank', NULL, NULL, 16),"
        "(1, 16777222, 0, NULL, 18, 'NCCL communicator ID', NULL, NULL, NULL), (1, 16777222, 1, NULL, 22, 'Message "
        "size [bytes]', NULL, NULL, 8),"
        "(1, 16777222, 2, NULL, 5, 'Root', NULL, NULL, 16);");
  sqlite3_stmt* nv = nullptr;
  sqlite3_prepare_v2(db.handle(),
                     "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId, binaryData) VALUES "
                     "(?, ?, 59, ?, 7, 1, ?)",
                     -1, &nv, nullptr);
  auto range = [&](int64_t start, int64_t end, const char* name, const std::string& blob) {
    sqlite3_bind_int64(nv, 1, start), sqlite3_bind_int64(nv, 2, end),
        sqlite3_bind_text(nv, 3, name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_blob(nv, 4, blob.data(), int(blob.size()), SQLITE_TRANSIENT);
    sqlite3_step(nv), sqlite3_reset(nv);
  };
  // An all-reduce of 4 MiB, then a send of 1 MiB to rank 1 and a receive from it in one group.
  range(1000, 9000, "ncclAllReduce", payload(0xabc, 4 << 20, 0));
  db.exec(
      "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (2000, 3000, 0, 7, 11, 3, 0);"
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (5000, 900000, 0, 7, 11, 0, 1, 1);");
  range(20000, 21000, "ncclGroupStart", std::string());
  range(21000, 22000, "ncclSend", payload(0xabc, 1 << 20, 1));
  range(22000, 23000, "ncclRecv", payload(0xabc, 1 << 20, 1));
  range(23000, 30000, "ncclGroupEnd", std::string());
  db.exec(
      "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (24000, 25000, 0, 7, 12, 3, 0);"
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000000, 1900000, 0, 7, 12, 0, 2, 2);");
  sqlite3_finalize(nv);
  db.exec("COMMIT");
}

std::vector<int64_t> comm_bytes(const model::Rank& r) {
  std::vector<int64_t> out;
  for (const model::Track& t : r.tracks)
    for (const model::Event& e : t.events)
      if (e.cls == model::IntervalClass::Communication) out.push_back(e.bytes);
  return out;
}

TEST(NsysBinaryPayload, MessageSizesReadThroughTheExportsSchemas) {
  test::TempDir d;
  const fs::path db = d.path() / "binary.sqlite";
  write_payload_export(db, true);
  plugins::LoadResult run = plugins::load({db});
  ASSERT_EQ(run.trace.ranks.size(), 1u);
  const std::vector<int64_t> want{4 << 20, 1 << 20};  // the send/recv pair counted by what is sent
  EXPECT_EQ(comm_bytes(run.trace.ranks[0]), want);
  for (const std::string& w : run.trace.ranks[0].warnings) EXPECT_EQ(w.find("binary payload"), std::string::npos) << w;

  // The peer of a send, and the ranks of a communicator init, as the schemas place them.
  nsys::Export x(db.string(), "binary.sqlite");
  std::vector<std::string> missing;
  nsys::NvtxSchemas schemas(x, missing);
  ASSERT_TRUE(missing.empty());
  size_t undescribed = 0;
  nsys::NcclPayload send = schemas.decode(1, "ncclSend", payload(0xabc, 1 << 20, 3), undescribed);
  EXPECT_EQ(send.peer, 3);
  EXPECT_EQ(send.bytes, 1 << 20);
  std::string init(24, '\0');
  const int32_t ranks = 8, rank = 5;
  std::memcpy(init.data() + 8, &ranks, 4), std::memcpy(init.data() + 12, &rank, 4);
  nsys::NcclPayload comm = schemas.decode(1, "ncclCommInitRank", init, undescribed);
  EXPECT_EQ(comm.nranks, 8);
  EXPECT_EQ(comm.rank, 5);
  EXPECT_EQ(undescribed, 0u);
  // A broadcast has no peer in its schema, and another domain no schema at all: unknown, and counted.
  nsys::NcclPayload other = schemas.decode(2, "ncclAllReduce", payload(0xabc, 64, 0), undescribed);
  EXPECT_EQ(other.bytes, -1);
  EXPECT_EQ(undescribed, 1u);
}

TEST(NsysBinaryPayload, SendRecvKernelKeepsItsPeerAsAnArg) {
  test::TempDir d;
  const fs::path db = d.path() / "binary.sqlite";
  write_payload_export(db, true);
  plugins::LoadOptions o;
  o.keep_args = true;
  plugins::LoadResult run = plugins::load({db}, o);
  ASSERT_EQ(run.trace.ranks.size(), 1u);
  const model::Rank& r = run.trace.ranks[0];
  const model::EventArgs* args = run.trace.args_of(0);
  ASSERT_NE(args, nullptr);
  std::map<std::string, int64_t> peers;  // kernel kind -> peer arg (-1 none)
  for (uint32_t t = 0; t < r.tracks.size(); ++t)
    for (uint32_t i = 0; i < r.tracks[t].events.size(); ++i) {
      const model::Event& e = r.tracks[t].events[i];
      if (e.cls != model::IntervalClass::Communication) continue;
      auto v = args->find(t, i, r.strings.find("peer"));
      peers[std::string(model::to_string(e.coll))] = v ? v->i : -1;
    }
  const std::map<std::string, int64_t> want{{"all_reduce", -1}, {"send_recv", 1}};
  EXPECT_EQ(peers, want);
}

TEST(NsysBinaryPayload, WithoutSchemaTablesBytesStayUnknownAndTheLoadSaysWhy) {
  test::TempDir d;
  const fs::path db = d.path() / "binary.sqlite";
  write_payload_export(db, false);
  plugins::LoadResult run = plugins::load({db});
  ASSERT_EQ(run.trace.ranks.size(), 1u);
  const std::vector<int64_t> unknown{model::kUnknown, model::kUnknown};
  EXPECT_EQ(comm_bytes(run.trace.ranks[0]), unknown);
  std::string warnings;
  for (const std::string& w : run.trace.ranks[0].warnings) warnings += w + "\n";
  EXPECT_NE(warnings.find("NVTX_PAYLOAD_SCHEMAS"), std::string::npos) << warnings;
  EXPECT_NE(warnings.find("binary payload"), std::string::npos) << warnings;
}

}  // namespace
