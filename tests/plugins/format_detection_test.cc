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
  std::ofstream(d.path() / "k.json") << R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 2,
    "args": {"stream": 7, "shardscope": {"x": 1}}}], "schemaVersion": 1})";
  plugins::LoadResult r = plugins::load({d.path() / "k.json"});
  ASSERT_EQ(r.trace.ranks.size(), 1u);
  EXPECT_EQ(r.trace.ranks[0].format, "kineto");
}

}  // namespace
