// Progress inside one big file: the loader the viewer opens runs with (plugins::load) reports the file's bytes
// parsed while it is parsed, not only when it ends, in both formats the viewer's big runs come in. The file is
// the ingest benchmarks' generated rank, written here at about 15 MB.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "plugins/load/load.h"
#include "viewer/bench/generated_files.h"

namespace fs = std::filesystem;
using namespace shardscope;

namespace {

constexpr size_t kEvents = 100'000;  // about 15 MB of JSON in either format

struct Seen {
  std::vector<uint64_t> in_file;  // reading_bytes_done while the file was being read, in order
  std::vector<uint64_t> events;   // reading_events at the same calls
  std::vector<uint64_t> total;    // bytes_done at every call
  uint64_t reading_bytes = 0;
  plugins::LoadProgress last;
};

Seen open_one(const fs::path& file) {
  Seen s;
  plugins::LoadOptions options;
  options.on_progress = [&](const plugins::LoadProgress& p) {  // called one at a time
    s.total.push_back(p.bytes_done);
    s.last = p;
    if (p.reading != file.string()) return;
    s.in_file.push_back(p.reading_bytes_done);
    s.events.push_back(p.reading_events);
    s.reading_bytes = p.reading_bytes;
  };
  plugins::LoadResult r = plugins::load({file}, options);
  EXPECT_EQ(r.trace.ranks.size(), 1u);
  return s;
}

void expect_moves_through_the_file(bool kineto) {
  const fs::path dir = fs::path(testing::TempDir()) / (kineto ? "progress_kineto" : "progress_shardscope");
  fs::create_directories(dir);
  const fs::path file = dir / (kineto ? "rank0.pt.trace.json" : "trace.rank0.json");
  bench::write_generated_rank(file, 0, 1, kEvents, kineto);
  const uint64_t size = fs::file_size(file);
  ASSERT_GT(size, 12u << 20);

  const Seen s = open_one(file);
  EXPECT_EQ(s.reading_bytes, size);
  // The first call is the file's start (0 bytes); then reports from inside the parse: the shardscope reader
  // every 4 MB of text, the Kineto importer every 2 MB chunk, so at least three in 12 MB, but not per event.
  ASSERT_GE(s.in_file.size(), 4u);
  EXPECT_EQ(s.in_file.front(), 0u);
  size_t inside = 0;
  for (size_t i = 1; i < s.in_file.size(); ++i) {
    EXPECT_GE(s.in_file[i], s.in_file[i - 1]) << "call " << i;
    EXPECT_GE(s.events[i], s.events[i - 1]) << "call " << i;
    if (s.in_file[i] > 0 && s.in_file[i] < size) ++inside;
  }
  EXPECT_GE(inside, 3u);
  EXPECT_LE(s.in_file.size(), size / (1u << 20));
  // The last in-file report is the end of the parse: all of the text but the array's closing bytes, every event.
  EXPECT_GE(s.in_file.back(), size - 16);
  EXPECT_LE(s.in_file.back(), size);
  EXPECT_GE(s.events.back(), kEvents);
  // Over the whole load the total only grows, and ends at the file's size with the file done.
  for (size_t i = 1; i < s.total.size(); ++i) EXPECT_GE(s.total[i], s.total[i - 1]) << "call " << i;
  EXPECT_EQ(s.total.back(), size);
  EXPECT_EQ(s.last.files_done, 1u);
  EXPECT_EQ(s.last.file, file.string());
  fs::remove_all(dir);
}

}  // namespace

TEST(LoadProgress, ShardscopeFileReportsBytesWhileParsed) { expect_moves_through_the_file(false); }

TEST(LoadProgress, KinetoFileReportsBytesWhileParsed) { expect_moves_through_the_file(true); }
