// The Nsight importer's reads (plugins/nsys/prefetch.h): on a second thread and in the caller's thread they
// hand over the same rows (integers, NULLs, text, blobs, floats, across chunk boundaries), and an error SQLite
// meets part-way is thrown from row() naming the file, after the rows before it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plugins/nsys/prefetch.h"
#include "plugins/nsys/nsys_db.h"
#include "tests/plugins/nsys_support.h"
#include "tests/support/temp_dir.h"
#include "tracer/format/error.h"

using namespace shardscope;
using Reading = nsys::Prefetched::Reading;

namespace {

constexpr int kRows = 40'000;  // more than two chunks

void write_table(const std::filesystem::path& file) {
  test::Sql db(file, true);
  db.exec(
      "CREATE TABLE t (id INTEGER, v INTEGER, s TEXT, b BLOB, f REAL);"
      "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < " +
      std::to_string(kRows - 1) +
      ") "
      "INSERT INTO t SELECT i, CASE WHEN i % 7 = 0 THEN NULL WHEN i % 11 = 0 THEN 0 ELSE i * 1000003 END, "
      "CASE WHEN i % 5 = 0 THEN NULL WHEN i % 13 = 0 THEN '' ELSE 'name ' || i END, "
      "CASE WHEN i % 3 = 0 THEN x'00ff10' ELSE NULL END, i / 4.0 FROM n;");
}

// Every cell as text with its kind, the way the importer's loops read them.
template <typename Q>
std::vector<std::string> read_all(Q& q, int columns) {
  std::vector<std::string> rows;
  while (q.row()) {
    std::string r;
    for (int c = 0; c < columns; ++c) {
      if (q.null(c)) r += "N|";
      else if (q.is_text(c))
        r += "T" + std::string(q.text(c)) + "|";
      else
        r += "I" + std::to_string(q.i64(c)) + "|";
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace

TEST(NsysReads, ThreadAndInlineGiveTheSameRows) {
  test::TempDir dir;
  const auto file = dir.path() / "t.sqlite";
  write_table(file);
  nsys::Db db(file.string(), "t.sqlite");
  const std::string sql = "SELECT id, v, s, b, f FROM t WHERE id >= ?1 AND id < ?2 ORDER BY id";
  // The truth: the worker thread's reading, which the importer used alone before, checked here cell by cell
  // against what was written.
  nsys::Prefetched threaded(db, file.string(), sql, {3, kRows - 2}, Reading::kThread);
  const std::vector<std::string> truth = read_all(threaded, 5);
  ASSERT_EQ(truth.size(), size_t(kRows - 5));
  EXPECT_EQ(truth[0], std::string("I3|I3000009|Tname 3|T\0\xFF\x10|I0|", 28));  // a blob reads as its bytes
  EXPECT_EQ(truth[4], "I7|N|Tname 7|N|I1|");      // NULLs; a REAL as SQLite's integer conversion
  EXPECT_EQ(truth[8], "I11|I0|Tname 11|N|I2|");   // a 0 in an INTEGER column is 0, not NULL
  EXPECT_EQ(truth[10], "I13|I13000039|T|N|I3|");  // an empty text is text
  for (Reading how : {Reading::kInline, Reading::kBySize}) {
    nsys::Prefetched q(db, file.string(), sql, {3, kRows - 2}, how);
    const std::vector<std::string> got = read_all(q, 5);
    ASSERT_EQ(got.size(), truth.size()) << int(how);
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], truth[i]) << "row " << i << ", reading " << int(how);
  }
}

TEST(NsysReads, AnErrorPartWayIsThrownNamingTheFileAfterTheRowsBeforeIt) {
  test::TempDir dir;
  const auto file = dir.path() / "t.sqlite";
  write_table(file);
  nsys::Db db(file.string(), "broken.sqlite");
  // abs() of the smallest integer fails in sqlite3_step ("integer overflow") at row 20,001.
  const std::string sql = "SELECT CASE WHEN id > 20000 THEN abs(-9223372036854775807 - 1) ELSE id END FROM t";
  for (Reading how : {Reading::kThread, Reading::kInline}) {
    nsys::Prefetched q(db, file.string(), sql, {}, how);
    int rows = 0;
    try {
      while (q.row()) {
        ASSERT_EQ(q.i64(0), rows);
        ++rows;
      }
      FAIL() << "no error, reading " << int(how);
    } catch (const trace::TraceError& e) {
      EXPECT_NE(std::string(e.what()).find("broken.sqlite"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("integer overflow"), std::string::npos) << e.what();
    }
    // Rows come in whole chunks: the first chunk (16,384 rows) arrives, the one with the error does not.
    EXPECT_EQ(rows, 16'384) << int(how);
  }
}

TEST(NsysReads, ASmallFileIsReadInTheCallersThreadABigOneOnASecond) {
  test::TempDir dir;
  const auto small = dir.path() / "t.sqlite", big = dir.path() / "big.sqlite";
  write_table(small);
  write_table(big);
  test::Sql(big, true).exec("CREATE TABLE pad (b BLOB); INSERT INTO pad VALUES (zeroblob(" +
                            std::to_string(nsys::Prefetched::kThreadFrom) + "));");
  ASSERT_LT(std::filesystem::file_size(small), nsys::Prefetched::kThreadFrom);
  ASSERT_GE(std::filesystem::file_size(big), nsys::Prefetched::kThreadFrom);
  nsys::Db small_db(small.string(), "t.sqlite"), big_db(big.string(), "big.sqlite");
  EXPECT_FALSE(nsys::Prefetched(small_db, small.string(), "SELECT id FROM t", {}).on_thread());
  EXPECT_TRUE(nsys::Prefetched(big_db, big.string(), "SELECT id FROM t", {}).on_thread());
}

TEST(NsysReads, LeavingEarlyIsClean) {
  test::TempDir dir;
  const auto file = dir.path() / "t.sqlite";
  write_table(file);
  nsys::Db db(file.string(), "t.sqlite");
  // Stopping after a few rows, with chunks still waiting on the worker, neither hangs nor leaks.
  for (Reading how : {Reading::kThread, Reading::kInline}) {
    nsys::Prefetched q(db, file.string(), "SELECT id FROM t ORDER BY id", {}, how);
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(q.row());
    EXPECT_EQ(q.i64(0), 2);
  }
}
