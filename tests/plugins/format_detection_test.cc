// Which importer reads a file is decided by what the file is, not by the order of its keys: a shardscope trace
// rewritten with sorted keys (jq -S, Python's sort_keys, nlohmann's default dump) puts "displayTimeUnit"
// before the "shardscope" header, and was taken for a PyTorch profiler trace with nothing on the device
// timeline. A UTF-8 byte order mark in front changes nothing either.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "plugins/load/load.h"
#include "plugins/load/read_text.h"
#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;
using namespace shardscope;

namespace {

const fs::path kGolden = fs::path(SHARDSCOPE_SOURCE_DIR) / "tests/golden/trainer_cpu_2ranks/pre/trace.rank0.json.gz";

size_t events(const model::Rank& r) {
  size_t n = 0;
  for (const auto& t : r.tracks) n += t.events.size();
  return n;
}

TEST(FormatDetection, SortedKeysAndAByteOrderMarkStillReadAsShardscope) {
  const model::Rank as_written = std::move(plugins::load({kGolden}).trace.ranks.at(0));
  ASSERT_EQ(as_written.format, "shardscope");
  ASSERT_GT(as_written.steps.size(), 0u);

  plugins::FileText text = plugins::read_text(kGolden);
  const nlohmann::json doc = nlohmann::json::parse(text.text());
  const std::string sorted = doc.dump();  // nlohmann keeps object keys sorted
  ASSERT_LT(sorted.find("\"displayTimeUnit\""), sorted.find("\"shardscope\""));

  test::TempDir d;
  std::ofstream(d.path() / "sorted.json", std::ios::binary) << sorted;
  std::ofstream(d.path() / "bom.json", std::ios::binary) << "\xEF\xBB\xBF" << sorted;
  for (const char* name : {"sorted.json", "bom.json"}) {
    plugins::LoadResult r = plugins::load({d.path() / name});
    ASSERT_EQ(r.trace.ranks.size(), 1u) << name;
    const model::Rank& rank = r.trace.ranks[0];
    EXPECT_EQ(rank.format, "shardscope") << name;
    EXPECT_EQ(rank.rank, as_written.rank) << name;
    EXPECT_EQ(events(rank), events(as_written)) << name;
    EXPECT_EQ(rank.steps.size(), as_written.steps.size()) << name;
  }
}

TEST(FormatDetection, AKinetoTraceIsNotTakenForShardscopeByANestedKey) {
  // "shardscope" as a key inside an event's args is not the header.
  test::TempDir d;
  std::ofstream(d.path() / "k.json")
      << R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 2,
    "args": {"stream": 7, "shardscope": {"x": 1}}}], "schemaVersion": 1})";
  plugins::LoadResult r = plugins::load({d.path() / "k.json"});
  ASSERT_EQ(r.trace.ranks.size(), 1u);
  EXPECT_EQ(r.trace.ranks[0].format, "kineto");
}

// Issue #25: a PyTorch profiler trace with a byte order mark in front is read as the same trace without it.
TEST(FormatDetection, AKinetoTraceWithAByteOrderMarkReadsAsWithout) {
  test::TempDir d;
  const std::string kineto = R"J({"schemaVersion": 1, "traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 10, "dur": 20, "args": {"stream": 7}},
    {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", "pid": 0, "tid": 9, "ts": 20, "dur": 20, "args": {"stream": 9}}
  ], "distributedInfo": {"rank": 3, "world_size": 4}})J";
  std::ofstream(d.path() / "plain.json", std::ios::binary) << kineto;
  std::ofstream(d.path() / "bom.json", std::ios::binary) << "\xEF\xBB\xBF" << kineto;
  const model::Rank plain = std::move(plugins::load({d.path() / "plain.json"}).trace.ranks.at(0));
  plugins::LoadResult r = plugins::load({d.path() / "bom.json"});
  ASSERT_EQ(r.trace.ranks.size(), 1u);
  EXPECT_EQ(r.trace.ranks[0].format, "kineto");
  EXPECT_EQ(r.trace.ranks[0].rank, 3);
  EXPECT_EQ(events(r.trace.ranks[0]), events(plain));
  EXPECT_EQ(events(plain), 2u);
}

// Issue #25: a shardscope trace whose "shardscope" header comes after more than the detection head's worth
// of events (here 70 KiB) is still read as shardscope, as `inspect` reads it, not as a PyTorch profiler trace.
TEST(FormatDetection, AHeaderAfterTheFirst64KiBStillReadsAsShardscope) {
  const model::Rank as_written = std::move(plugins::load({kGolden}).trace.ranks.at(0));
  plugins::FileText text = plugins::read_text(kGolden);
  nlohmann::json doc = nlohmann::json::parse(text.text());
  std::string events_first = "{\"traceEvents\": [" + std::string(70 * 1024, ' ');
  for (size_t k = 0; k < doc["traceEvents"].size(); ++k) events_first += (k ? "," : "") + doc["traceEvents"][k].dump();
  events_first += "]";
  for (auto it = doc.begin(); it != doc.end(); ++it)
    if (it.key() != "traceEvents") events_first += ", \"" + it.key() + "\": " + it.value().dump();
  events_first += "}";
  ASSERT_GT(events_first.find("\"shardscope\""), size_t(64 * 1024));

  test::TempDir d;
  std::ofstream(d.path() / "late.json", std::ios::binary) << events_first;
  std::ofstream(d.path() / "late_bom.json", std::ios::binary) << "\xEF\xBB\xBF" << events_first;
  for (const char* name : {"late.json", "late_bom.json"}) {
    for (bool keep_args : {false, true}) {
      plugins::LoadOptions o;
      o.keep_args = keep_args;
      plugins::LoadResult r = plugins::load({d.path() / name}, o);
      ASSERT_EQ(r.trace.ranks.size(), 1u) << name;
      const model::Rank& rank = r.trace.ranks[0];
      EXPECT_EQ(rank.format, "shardscope") << name;
      EXPECT_EQ(rank.rank, as_written.rank) << name;
      EXPECT_EQ(events(rank), events(as_written)) << name;
      EXPECT_EQ(rank.steps.size(), as_written.steps.size()) << name;
    }
  }
}

}  // namespace
