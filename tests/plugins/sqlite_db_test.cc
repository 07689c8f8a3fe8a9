// The one SQLite wrapper (plugins/common/sqlite_db.h): a database created and written reads back every type
// it was bound (NULLs, text with a NUL, blobs), opened read-only; and its errors are the user's words about
// the file (a file that is not SQLite, a file that cannot be opened, a statement SQLite refuses).
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "plugins/common/sqlite_db.h"
#include "tests/support/temp_dir.h"
#include "tracer/format/error.h"

using namespace shardscope;
using sqlite::Db;
using sqlite::Stmt;

namespace {

constexpr sqlite::Wording kWords{.cannot_open = "OPEN? ", .before = "<", .after = "> was the reason"};
constexpr int64_t kNone = std::numeric_limits<int64_t>::min();  // the test's "unknown" integer

// The message thrown by `f`, which must throw trace::TraceError naming `file`.
template <typename F>
std::string error_of(F f, const std::string& file) {
  try {
    f();
  } catch (const trace::TraceError& e) {
    EXPECT_EQ(e.file(), file);
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

void write(const std::filesystem::path& file) {
  Db db(file.string(), "w.sqlite", kWords, Db::Mode::kCreate);
  db.exec("PRAGMA journal_mode = OFF; BEGIN; CREATE TABLE t(i INTEGER, k INTEGER, f REAL, o REAL, s TEXT, b BLOB);");
  Stmt q(db, "INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)");
  const std::vector<uint8_t> bytes = {0, 255, 16};
  q.bind(1, int64_t(-7))
      .bind_or_null(2, 42, kNone)
      .bind(3, 2.5)
      .bind(4, std::optional<double>(0.25))
      .bind(5, std::string_view("a\0b", 3))
      .bind_blob(6, bytes)
      .run();
  // run() reset the statement: the same one inserts the next row.
  q.bind(1, std::numeric_limits<int64_t>::max())
      .bind_or_null(2, kNone, kNone)
      .bind(3, -1.0)
      .bind(4, std::optional<double>())
      .bind(5, std::string_view(""))
      .bind_null(6)
      .run();
  db.exec("COMMIT");
}

}  // namespace

TEST(SqliteDb, WritesAndReadsBackEveryBoundType) {
  test::TempDir dir;
  const auto file = dir.path() / "w.sqlite";
  write(file);
  Db db(file.string(), "w.sqlite", kWords);
  EXPECT_TRUE(db.has_table("t"));
  EXPECT_FALSE(db.has_table("u"));
  EXPECT_EQ(db.columns("t"), (std::set<std::string>{"i", "k", "f", "o", "s", "b"}));
  EXPECT_TRUE(db.has_column("t", "s"));
  EXPECT_FALSE(db.has_column("u", "s"));
  Stmt q(db, "SELECT i, k, f, o, s, b FROM t WHERE i >= ?1 ORDER BY rowid");
  q.bind(1, int64_t(-100));
  EXPECT_EQ(q.columns(), 6);
  ASSERT_TRUE(q.row());
  EXPECT_EQ(q.i64(0), -7);
  EXPECT_FALSE(q.null(1));
  EXPECT_EQ(q.i64_or(1, kNone), 42);
  EXPECT_EQ(q.f64(2), 2.5);
  EXPECT_EQ(q.f64(3), 0.25);
  EXPECT_TRUE(q.is_text(4));
  EXPECT_EQ(q.text(4), std::string_view("a\0b", 3));
  const auto blob = q.blob(5);
  EXPECT_EQ(std::vector<uint8_t>(blob.begin(), blob.end()), (std::vector<uint8_t>{0, 255, 16}));
  ASSERT_TRUE(q.row());
  EXPECT_EQ(q.i64(0), std::numeric_limits<int64_t>::max());
  EXPECT_TRUE(q.null(1));
  EXPECT_EQ(q.i64_or(1, kNone), kNone);
  EXPECT_EQ(q.f64(2), -1.0);
  EXPECT_TRUE(q.null(3));
  EXPECT_TRUE(q.is_text(4));  // an empty text is text, not NULL
  EXPECT_EQ(q.text(4), "");
  EXPECT_TRUE(q.null(5));
  EXPECT_TRUE(q.blob(5).empty());
  EXPECT_FALSE(q.row());
}

TEST(SqliteDb, AFileThatIsNotSqliteOrCannotOpenReadsInTheUsersWords) {
  test::TempDir dir;
  const auto file = dir.path() / "text.sqlite";
  std::ofstream(file) << std::string(4096, 'x');
  EXPECT_EQ(error_of([&] { Db db(file.string(), "text.sqlite", kWords); }, "text.sqlite"),
            "text.sqlite: at byte 0: <file is not a database> was the reason");
  const auto absent = dir.path() / "no" / "such.sqlite";
  EXPECT_EQ(error_of([&] { Db db(absent.string(), "such.sqlite", kWords); }, "such.sqlite"),
            "such.sqlite: at byte 0: OPEN? unable to open database file");
  EXPECT_EQ(error_of([&] { Db db(absent.string(), "such.sqlite", kWords, Db::Mode::kCreate); }, "such.sqlite"),
            "such.sqlite: at byte 0: OPEN? unable to open database file");
}

TEST(SqliteDb, AStatementSqliteRefusesNamesTheFile) {
  test::TempDir dir;
  const auto file = dir.path() / "w.sqlite";
  write(file);
  Db db(file.string(), "w.sqlite", kWords);
  EXPECT_EQ(error_of([&] { Stmt q(db, "SELECT nope FROM t"); }, "w.sqlite"),
            "w.sqlite: at byte 0: <no such column: nope> was the reason");
  // Read-only: a write is refused when it runs.
  EXPECT_EQ(error_of([&] { db.exec("DELETE FROM t"); }, "w.sqlite"),
            "w.sqlite: at byte 0: <attempt to write a readonly database> was the reason");
  Stmt q(db, "SELECT i FROM t WHERE i = ?1");
  EXPECT_EQ(error_of([&] { q.bind(2, int64_t(1)); }, "w.sqlite"),
            "w.sqlite: at byte 0: <column index out of range> was the reason");
}

TEST(SqliteDb, QuotesIdentifiers) { EXPECT_EQ(sqlite::quoted("a\"b c"), "\"a\"\"b c\""); }
