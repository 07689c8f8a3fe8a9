// A query run on a second connection and thread, its rows handed over in chunks: the big reads (CUDA calls,
// kernels, NVTX ranges: millions of rows) step SQLite on one core while the rank is built from the rows on
// another. Reads like Stmt (row, i64, i64_or, null, text, is_text), so the importer's loops are the same.
// At most a few chunks wait at a time, so memory stays a few MB whatever the table's size. An error SQLite
// meets in the worker (a damaged page) is thrown from row() as Stmt would throw it.
// A small file is read in the caller's thread on its own connection instead: there a thread and a second
// connection (which parses the schema again) cost more than they save, about 4x an import of a tiny export.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "plugins/nsys/nsys_db.h"

namespace shardscope::nsys {

class Prefetched {
 public:
  enum class Reading { kBySize, kThread, kInline };
  // Files from this size on are read on a second thread (kBySize).
  static constexpr uint64_t kThreadFrom = 16ull << 20;

  // `db`: the caller's connection to `file` (read on when inline); `binds`: ?1, ?2, ... in order.
  Prefetched(const Db& db, const std::string& file, std::string sql, std::vector<int64_t> binds,
             Reading how = Reading::kBySize);
  ~Prefetched();
  Prefetched(const Prefetched&) = delete;
  Prefetched& operator=(const Prefetched&) = delete;

  bool row();
  bool on_thread() const { return worker_.joinable(); }
  int columns() const { return cur_->columns; }  // once row() has given one
  bool null(int c) const { return cur_->type[cell(c)] == kNull; }
  bool is_text(int c) const { return cur_->type[cell(c)] == kText; }
  int64_t i64(int c) const { return cur_->value[cell(c)]; }
  int64_t i64_or(int c, int64_t null) const { return this->null(c) ? null : i64(c); }
  // A TEXT or BLOB cell's bytes; NULL: an empty view with no data; a number: its decimal text.
  std::string_view text(int c) const;

 private:
  enum : uint8_t { kNull, kInt, kFloat, kText };
  struct Chunk {
    int columns = 0;
    size_t rows = 0;
    std::vector<int64_t> value;    // per cell: the integer (SQLite's conversion), or the text's offset
    std::vector<uint32_t> length;  // per cell: the text's length
    std::vector<uint8_t> type;
    std::string arena;
  };
  size_t cell(int c) const { return at_ * size_t(cur_->columns) + size_t(c); }
  void work(std::string file, std::string name, std::string sql, std::vector<int64_t> binds);
  // Up to a chunk of the statement's rows into `c`; false once the statement has no more.
  static bool fill(Stmt& q, const std::vector<bool>& integer, Chunk& c);
  static std::vector<bool> integer_columns(Stmt& q);

  std::unique_ptr<Stmt> inline_;  // set when read in the caller's thread
  std::vector<bool> inline_integer_;
  bool inline_more_ = true;

  std::mutex m_;
  std::condition_variable cv_;
  std::deque<Chunk> ready_;
  bool done_ = false, stop_ = false;
  std::exception_ptr error_;
  Chunk current_;
  const Chunk* cur_ = &current_;
  size_t at_ = 0;
  bool started_ = false;
  mutable std::string number_;  // text() of a number
  std::thread worker_;
};

}  // namespace shardscope::nsys
