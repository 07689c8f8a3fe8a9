// A summary file that is not what this shardscope wrote is refused by name, never half read.
#include <filesystem>
#include <algorithm>
#include <fstream>
#include <optional>

#include <fmt/format.h>

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <zlib.h>

#include "analyzer/analysis/summary_file.h"
#include "plugins/load/load.h"
#include "tests/support/run.h"
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
  // `text` as a value of meta.
  void set_meta(const char* key, const std::string& text) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, "UPDATE meta SET value = ?1 WHERE key = ?2", -1, &st, nullptr), SQLITE_OK);
    sqlite3_bind_text(st, 1, text.data(), int(text.size()), SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
    EXPECT_EQ(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    sqlite3_close(db);
  }
  // The report record: `raw` deflated after the size it says it holds (`declared`, or raw's own).
  void set_record(const std::string& raw, std::optional<uint64_t> declared = std::nullopt) {
    uLongf n = compressBound(uLong(raw.size()));
    std::string z(8 + n, '\0');
    const uint64_t size = declared.value_or(raw.size());
    for (int i = 0; i < 8; ++i) z[size_t(i)] = char(uint8_t(size >> (8 * i)));
    ASSERT_EQ(compress2(reinterpret_cast<Bytef*>(z.data() + 8), &n, reinterpret_cast<const Bytef*>(raw.data()),
                        uLong(raw.size()), 6),
              Z_OK);
    z.resize(8 + n);
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, "UPDATE report SET cbor = ?1", -1, &st, nullptr), SQLITE_OK);
    sqlite3_bind_blob(st, 1, z.data(), int(z.size()), SQLITE_TRANSIENT);
    EXPECT_EQ(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    sqlite3_close(db);
  }
  // What the CLI says of the summary: exit 2 and one line naming it, for every command that reads summaries.
  std::string cli_refusal() {
    std::string said;
    for (std::vector<std::string> args : {std::vector<std::string>{"report", path_.string()},
                                          {"report", "--format", "json", path_.string()},
                                          {"check-prefetch", path_.string()},
                                          {"diff", path_.string(), path_.string()}}) {
      args.insert(args.begin(), SHARDSCOPE_BIN);
      test::RunResult r = test::run(args);
      EXPECT_EQ(r.rc, 2) << args[1] << ": " << r.err;
      EXPECT_TRUE(r.err.starts_with("shardscope: error: " + path_.string() + ": ")) << args[1] << ": " << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args[1] << ": " << r.err;
      EXPECT_EQ(r.err.find("json.exception"), std::string::npos) << r.err;
      said = r.err;
    }
    return said;
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

// Summaries are untrusted input, held to the traces' limits (issue #40).
TEST_F(SummaryFile, ARunConfigNestedDeeperThanATraceMayIsRefused) {
  set_meta("run_config", std::string(100000, '[') + std::string(100000, ']'));
  EXPECT_NE(refusal().find("meta.run_config is not JSON a trace may hold: nests objects and arrays deeper than 128 "
                           "levels"),
            std::string::npos);
  EXPECT_NE(cli_refusal().find("nests objects and arrays deeper than 128 levels"), std::string::npos);
}

TEST_F(SummaryFile, AReportRecordNestedDeeperThanATraceMayIsRefused) {
  set_record(std::string(100000, '\x81') + '\0');  // CBOR: arrays of one element, 100,000 deep
  EXPECT_NE(refusal().find("the report record is damaged: nests objects and arrays deeper than 128 levels"),
            std::string::npos);
  EXPECT_NE(cli_refusal().find("deeper than 128 levels"), std::string::npos);
}

TEST_F(SummaryFile, ARecordsSizeIsCheckedBeforeItIsInflated) {
  set_record(std::string(1000, '\0'), uint64_t(1) << 30);
  EXPECT_NE(refusal().find("says it holds 1073741824 bytes, over the 256 MiB a record may hold"), std::string::npos);
  // Under the cap, but more than its deflate stream can hold.
  set_record(std::string(1000, '\0'), uint64_t(100) << 20);
  EXPECT_NE(refusal().find("damaged (says it holds 104857600 bytes, more than its"), std::string::npos);
  EXPECT_NE(cli_refusal().find("104857600"), std::string::npos);
}

TEST_F(SummaryFile, ADamagedRecordSaysWhatIsWrongInOurWords) {
  set_record("\xa1\x61\x61");  // a map whose one key has no value: cut off
  EXPECT_EQ(cli_refusal(), "shardscope: error: " + path_.string() +
                               ": at byte 0: summary: the report record is damaged: parse error at byte 4: syntax "
                               "error while parsing CBOR value: unexpected end of input\n");
  set_record("\xa1\x61\x61\x01");  // {"a": 1}: no report in it
  EXPECT_NE(refusal().find("the report record is damaged: key 'report' not found"), std::string::npos);
}

TEST_F(SummaryFile, ARankOutsideItsWorldIsRefused) {
  for (const char* rank : {"-1", "9223372036854775807"}) {
    sql(fmt::format("UPDATE meta SET value = {} WHERE key = 'rank'", rank).c_str());
    EXPECT_NE(refusal().find(fmt::format("meta.rank is {}, not an integer from 0 to 2147483646", rank)),
              std::string::npos);
  }
  sql("UPDATE meta SET value = 2 WHERE key = 'rank'");
  EXPECT_NE(refusal().find("meta.rank is 2 but meta.world_size is 2: a run of 2 ranks has ranks 0 to 1"),
            std::string::npos);
  EXPECT_NE(cli_refusal().find("meta.rank is 2 but meta.world_size is 2"), std::string::npos);
  sql("UPDATE meta SET value = 1 WHERE key = 'rank'; UPDATE meta SET value = -3 WHERE key = 'world_size'");
  EXPECT_NE(refusal().find("meta.world_size is -3, not an integer from 0 to 2147483647"), std::string::npos);
}

TEST_F(SummaryFile, AMissingSchemaVersionIsSaidAsSuch) {
  sql("DELETE FROM meta WHERE key = 'schema_version'");
  EXPECT_TRUE(is_summary_file(path_));
  EXPECT_NE(refusal().find("summary: meta has no 'schema_version'"), std::string::npos);
  const std::string said = cli_refusal();
  EXPECT_NE(said.find("meta has no 'schema_version'"), std::string::npos) << said;
  EXPECT_EQ(said.find("Nsight"), std::string::npos) << said;
  // inspect reads traces: a summary is said to be one.
  test::RunResult r = test::run({SHARDSCOPE_BIN, "inspect", path_.string()});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err, "shardscope: error: " + path_.string() +
                       ": at byte 0: a shardscope rank summary, not a trace: inspect reads traces (report, "
                       "check-prefetch and diff read summaries)\n");
}

// A view in place of a table is never run (here an endless one), and is named.
TEST_F(SummaryFile, AViewInPlaceOfATableIsRefused) {
  sql("DROP TABLE warnings; CREATE VIEW warnings AS WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) "
      "SELECT x AS message FROM r");
  EXPECT_NE(refusal().find("summary: 'warnings' is not a plain table (warnings (view)): refused"), std::string::npos);
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
