// The one SQLite wrapper (plugins/common/sqlite_db.h): a database created and written reads back every type
// it was bound (NULLs, text with a NUL, blobs), opened read-only; and its errors are the user's words about
// the file (a file that is not SQLite, a file that cannot be opened, a statement SQLite refuses).
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
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

namespace {

// Each file in `dir` with its size and modification time: what reading must leave as it was.
std::map<std::string, std::pair<uintmax_t, std::filesystem::file_time_type>> listing(const std::filesystem::path& dir) {
  std::map<std::string, std::pair<uintmax_t, std::filesystem::file_time_type>> out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    out[e.path().filename().string()] = {e.is_regular_file() ? e.file_size() : 0, e.last_write_time()};
  return out;
}

// A database in WAL mode with a table, a view and a trigger: written and closed by SQLite itself, so that
// only the file is left (SQLite removes -wal and -shm at the last close).
void write_wal(const std::filesystem::path& file) {
  Db db(file.string(), "wal.sqlite", kWords, Db::Mode::kCreate);
  db.exec(
      "PRAGMA journal_mode = WAL; CREATE TABLE t(i INTEGER); INSERT INTO t VALUES (1), (2);"
      "CREATE VIEW v AS WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT x AS i FROM r;"
      "CREATE TABLE log(i INTEGER); CREATE TRIGGER g AFTER INSERT ON t BEGIN INSERT INTO log VALUES (new.i); END;");
}

}  // namespace

// Read-only and immutable: a WAL-mode file in a folder of odd names (a URI's '?', '#', '%' and a space) is
// read with nothing created or written beside it.
TEST(SqliteDb, ReadingCreatesAndWritesNothingBesideTheFile) {
  test::TempDir dir;
  const auto folder = dir.path() / "a b?c#d%20e";
  std::filesystem::create_directories(folder);
  const auto file = folder / "wal.sqlite";
  write_wal(file);
  const auto before = listing(folder);
  ASSERT_EQ(before.size(), 1u);
  {
    Db db(file.string(), "wal.sqlite", kWords);
    Stmt q(db, "SELECT count(*) FROM t");
    ASSERT_TRUE(q.row());
    EXPECT_EQ(q.i64(0), 2);
    EXPECT_EQ(listing(folder), before) << "while open";
  }
  EXPECT_EQ(listing(folder), before);
}

// Only plain tables are tables: a view (here an endless one) is skipped and named, never run.
TEST(SqliteDb, ViewsAreNotTablesAndAreNamedWhenAskedFor) {
  test::TempDir dir;
  const auto file = dir.path() / "wal.sqlite";
  write_wal(file);
  Db db(file.string(), "wal.sqlite", kWords);
  EXPECT_EQ(db.tables(), (std::set<std::string>{"t", "log"}));
  EXPECT_TRUE(db.skipped().empty());
  EXPECT_FALSE(db.has_table("v"));
  EXPECT_TRUE(db.columns("v").empty());
  EXPECT_EQ(db.skipped(), std::set<std::string>{"v (view)"});
  // Were it asked for by name, SQLite would not run it (views are off).
  EXPECT_NE(error_of([&] { Stmt q(db, "SELECT i FROM v"); }, "wal.sqlite").find("no such table"), std::string::npos);
}

// The work and the memory one file may take are bounded, and running out of either is one line naming the
// file in the user's words.
TEST(SqliteDb, WorkAndMemoryAreBounded) {
  test::TempDir dir;
  const auto file = dir.path() / "w.sqlite";
  write(file);
  const sqlite::Budget saved = sqlite::budget();
  sqlite::budget().min_steps = 2'000'000;
  sqlite::budget().steps_per_byte = 0;
  {
    Db db(file.string(), "w.sqlite", kWords);
    Stmt q(db, "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT count(*) FROM r");
    EXPECT_EQ(error_of([&] { q.row(); }, "w.sqlite"),
              "w.sqlite: at byte 0: <stopped after 2 million SQLite steps, more than a file of its size takes to "
              "read> was the reason");
  }
  sqlite::budget() = saved;
  sqlite::budget().heap_bytes = 16 << 20;
  {
    Db db(file.string(), "w.sqlite", kWords);
    Stmt q(db, "SELECT length(hex(zeroblob(32000000)))");  // 32 MB made, then 64 MB of text
    EXPECT_EQ(error_of([&] { q.row(); }, "w.sqlite"),
              "w.sqlite: at byte 0: <SQLite needed more than 16 MiB of memory to read it> was the reason");
  }
  sqlite::budget() = saved;
  Db db(file.string(), "w.sqlite", kWords);  // the process-wide heap limit is back
  Stmt q(db, "SELECT count(*) FROM t");
  EXPECT_TRUE(q.row());
}

// The counts the Nsight importer's single-pass test reads: a statement each prepare, a row each row() that
// has one (not the last step, which has none).
TEST(SqliteDb, CountsStatementsAndRows) {
  test::TempDir dir;
  const auto file = dir.path() / "c.sqlite";
  write(file);  // two rows in t
  Db db(file.string(), "c.sqlite", kWords);
  const sqlite::Counts before = sqlite::counts();
  {
    Stmt q(db, "SELECT i FROM t");
    while (q.row()) {}
    Stmt none(db, "SELECT i FROM t WHERE 0");
    EXPECT_FALSE(none.row());
  }
  const sqlite::Counts after = sqlite::counts();
  EXPECT_EQ(after.statements - before.statements, 2u);
  EXPECT_EQ(after.rows - before.rows, 2u);
}
