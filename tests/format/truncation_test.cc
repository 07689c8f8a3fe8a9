// A trace cut off at any byte loads every complete event before the cut, and says where the cut was.
#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/temp_dir.h"
#include "tracer/format/error.h"
#include "tracer/format/reader.h"
#include "tracer/tracer.h"

namespace shardscope::trace {
namespace {

namespace tr = shardscope::tracer;

// A real trace, written by the host tracer: ranges on two threads, counters, instants, metadata.
std::filesystem::path write_real_trace(const std::filesystem::path& path) {
  tr::start({.path = path, .rank = 1, .world_size = 2, .run_config = {{"sharding", "full_shard"}}});
  tr::name_this_thread("compute");
  uint32_t comm = tr::track("comm");
  for (int i = 0; i < 6; ++i) {
    tr::Range r("step", {{"step", i}});
    tr::counter("memory.activations", int64_t(i) * 1000);
    int64_t t0 = tr::now_ns();
    tr::complete(comm, "all_gather", "comm", t0, t0 + 10, {{"bytes", int64_t(4096)}});
    tr::instant("mark \"quoted\"");
  }
  std::thread([] { tr::Range r("other thread"); }).join();
  tr::metadata({{"run_config", {{"late", true}}}});
  tr::stop();
  return path;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

bool is_prefix(const std::vector<Event>& part, const std::vector<Event>& full) {
  return part.size() <= full.size() && std::equal(part.begin(), part.end(), full.begin());
}

TEST(Truncation, EveryByteOfAPlainTrace) {
  test::TempDir dir;
  std::string text = slurp(write_real_trace(dir.path() / "t.json"));
  TraceFile full = parse_trace(text, "full");
  ASSERT_FALSE(full.truncated);
  ASSERT_GT(full.events.size(), 30u);
  size_t complete_end = text.rfind('}') + 1;  // the closing brace of the top-level object

  size_t header_failures = 0, previous = 0;
  std::vector<bool> seen_count(full.events.size() + 1, false);
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    try {
      TraceFile part = parse_trace(std::string_view(text).substr(0, cut), "cut");
      ASSERT_TRUE(is_prefix(part.events, full.events)) << "cut at " << cut;
      ASSERT_GE(part.events.size(), previous) << "cut at " << cut;
      previous = part.events.size();
      seen_count[part.events.size()] = true;
      ASSERT_EQ(part.truncated.has_value(), cut < complete_end) << "cut at " << cut;
      if (part.truncated) {
        EXPECT_EQ(part.truncated->offset, cut);
        EXPECT_EQ(part.shardscope["rank"], 1);
      }
    } catch (const TraceError& e) {
      // Only a cut inside the header (or before anything) leaves nothing to load.
      ASSERT_EQ(previous, 0u) << "cut at " << cut << ": " << e.what();
      EXPECT_EQ(e.offset(), cut) << e.what();
      ++header_failures;
    }
  }
  EXPECT_GT(header_failures, 0u);
  // One event a line: every count from 0 to all was reachable by some cut.
  for (size_t n = 0; n < seen_count.size(); ++n) EXPECT_TRUE(seen_count[n]) << n << " events never seen";
  EXPECT_EQ(previous, full.events.size());
}

TEST(Truncation, GzipCutAtManyOffsets) {
  test::TempDir dir;
  auto path = write_real_trace(dir.path() / "t.json.gz");
  std::string gz = slurp(path);
  TraceFile full = read_trace(path);
  ASSERT_FALSE(full.truncated);
  size_t previous = 0, loaded = 0;
  auto cut_path = dir.path() / "cut.json.gz";
  for (size_t cut = 0; cut <= gz.size(); cut += 7) {
    {
      std::ofstream out(cut_path, std::ios::binary | std::ios::trunc);
      out.write(gz.data(), std::streamsize(cut));
    }
    try {
      TraceFile part = read_trace(cut_path);
      ASSERT_TRUE(is_prefix(part.events, full.events)) << "cut at " << cut;
      ASSERT_GE(part.events.size(), previous);
      previous = part.events.size();
      ++loaded;
    } catch (const TraceError& e) {
      ASSERT_EQ(previous, 0u) << "cut at " << cut << ": " << e.what();
    }
  }
  EXPECT_GT(loaded, 0u);
}

}  // namespace
}  // namespace shardscope::trace
