// A summary file that is not what this shardscope wrote is refused by name, never half read.
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "analyzer/analysis/summary_file.h"
#include "plugins/load/load.h"
#include "tracer/format/error.h"

namespace shardscope::analysis {
namespace {

namespace fs = std::filesystem;

class SummaryFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt_name();
    fs::create_directories(dir_);
    model::Trace t =
        plugins::load({fs::path(SHARDSCOPE_SOURCE_DIR) / "tests/golden/trainer_cpu_2ranks/pre/trace.rank1.json.gz"})
            .trace;
    RankSummary s = summarize(t.ranks.at(0), 0, Scope::Everything);
    path_ = dir_ / "rank1.sqlite";
    write_summary(path_, s);
    original_ = s;
  }
  void TearDown() override { fs::remove_all(dir_); }
  static std::string fmt_name() { return "shardscope-summary-test-" + std::to_string(::getpid()); }
  void sql(const char* statement) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, statement, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    sqlite3_close(db);
  }
  // The message read_summary throws, which must name the file.
  std::string refusal() {
    try {
      read_summary(path_, 0);
    } catch (const trace::TraceError& e) {
      EXPECT_NE(std::string(e.what()).find(path_.string()), std::string::npos) << e.what();
      return e.what();
    }
    ADD_FAILURE() << "read_summary accepted " << path_;
    return "";
  }
  fs::path dir_, path_;
  RankSummary original_;
};

TEST_F(SummaryFile, ReadsBackWhatWasWritten) {
  ASSERT_TRUE(is_summary_file(path_));
  RankSummary back = read_summary(path_, 5);
  EXPECT_EQ(back.report.rank, 1);
  EXPECT_EQ(back.key().order, 5u);
  EXPECT_EQ(back.header.world_size, 2);
  EXPECT_EQ(back.header.run_config, original_.header.run_config);
  EXPECT_EQ(back.header.wall_start, original_.header.wall_start);
  EXPECT_EQ(back.report.steps.size(), original_.report.steps.size());
  ASSERT_EQ(back.arrivals.wall_start, original_.arrivals.wall_start);
  EXPECT_EQ(back.device_time, original_.device_time);
  EXPECT_FALSE(back.arrivals.wall_start.empty());
}

TEST_F(SummaryFile, AnotherSchemaVersionIsRefusedByName) {
  sql("UPDATE meta SET value = 99 WHERE key = 'schema_version'");
  EXPECT_NE(refusal().find("schema version 99"), std::string::npos);
}

TEST_F(SummaryFile, AMissingReportRecordIsRefused) {
  sql("DELETE FROM report");
  EXPECT_NE(refusal().find("report table is empty"), std::string::npos);
}

TEST_F(SummaryFile, ADamagedReportRecordIsRefused) {
  sql("UPDATE report SET cbor = x'0400000000000000a1616101'");  // not zlib data
  EXPECT_NE(refusal().find("damaged"), std::string::npos);
}

TEST_F(SummaryFile, ACollectiveOrdinalGapIsRefused) {
  sql("DELETE FROM collectives WHERE ordinal = 1");
  EXPECT_NE(refusal().find("skip ordinal 1"), std::string::npos);
}

TEST_F(SummaryFile, ATruncatedFileIsRefused) {
  fs::resize_file(path_, 3000);
  refusal();
}

TEST_F(SummaryFile, AnSqliteFileWithoutOurTablesIsNotASummary) {
  fs::remove(path_);
  sql("CREATE TABLE StringIds(id INTEGER, value TEXT)");  // an Nsight Systems export, say
  EXPECT_FALSE(is_summary_file(path_));
}

}  // namespace
}  // namespace shardscope::analysis

namespace shardscope::analysis {
namespace {

// The default text report answers first at any rank count: at most 60 lines for 8 ranks and for 1,024
// (summaries of one real rank, renumbered, so that the run is cheap to make), and no line of it grows with
// the ranks (a list of every rank a cause hit was 2.6 KB at 1,024; the longest line, the model states, about 520 characters).
void expect_short_default_report(const fs::path& trace, const std::string& name) {
  model::Trace t = plugins::load({trace}).trace;
  const RankSummary one = summarize(t.ranks.at(0), 0, Scope::Everything);
  for (int world : {8, 1024}) {
    const fs::path dir = fs::temp_directory_path() /
                         ("shardscope-many-" + name + "-" + std::to_string(::getpid()) + "-" + std::to_string(world));
    fs::create_directories(dir);
    for (int r = 0; r < world; ++r) {
      RankSummary s = one;
      s.header.rank = s.report.rank = r;
      s.header.world_size = world;
      s.header.run_config["world_size"] = world;
      s.header.source = s.report.source = "rank" + std::to_string(r) + ".json";
      write_summary(dir / ("rank" + std::to_string(r) + ".sqlite"), s);
    }
    const std::string out = dir.string() + ".txt";
    const int rc =
        std::system((std::string(SHARDSCOPE_BIN) + " report " + dir.string() + " > " + out + " 2>/dev/null").c_str());
    EXPECT_EQ(rc, 0) << world;
    std::ifstream in(out);
    size_t lines = 0;
    bool summary_first = false;
    std::string text;
    for (std::string l; std::getline(in, l); ++lines) {
      if (lines == 1) summary_first = l.rfind(fmt::format("  run: {} ranks", world), 0) == 0;
      EXPECT_LE(l.size(), 700u) << name << ", " << world << " ranks: " << l;
      text += l + "\n";
    }
    EXPECT_TRUE(summary_first) << name << ", " << world;
    EXPECT_LE(lines, 60u) << name << ", " << world << " ranks:\n" << text;
    EXPECT_GT(lines, 10u) << name << ", " << world << " ranks";
    fs::remove_all(dir);
    fs::remove(out);
  }
}

TEST(ManyRanks, DefaultTextReportIsAtMostSixtyLines) {
  expect_short_default_report(
      fs::path(SHARDSCOPE_SOURCE_DIR) / "tests/golden/trainer_cpu_2ranks/pre/trace.rank1.json.gz", "cpu");
}

// A real 5-step run on H100s (NCCL, no prefetch): each step's table row and prefetch sentence, and the top
// device activity, would grow the report with the steps; the default shows the slowest few.
TEST(ManyRanks, DefaultTextReportOfAFiveStepH100RunIsAtMostSixtyLines) {
  expect_short_default_report(
      fs::path(SHARDSCOPE_SOURCE_DIR) / "tests/data/h100_nccl2/shardscope_train_none/trace.rank0.json.gz", "h100");
}

}  // namespace
}  // namespace shardscope::analysis
