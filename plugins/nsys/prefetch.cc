#include "plugins/nsys/prefetch.h"

#include <sqlite3.h>

#include <fmt/format.h>

#include "plugins/nsys/sqlite_db.h"

namespace shardscope::nsys {

namespace {
constexpr size_t kChunkRows = 16384;
constexpr size_t kChunksWaiting = 4;
}  // namespace

Prefetched::Prefetched(const std::string& file, const std::string& name, std::string sql, std::vector<int64_t> binds) {
  worker_ = std::thread(&Prefetched::work, this, file, name, std::move(sql), std::move(binds));
}

Prefetched::~Prefetched() {
  {
    std::lock_guard l(m_);
    stop_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

void Prefetched::work(std::string file, std::string name, std::string sql, std::vector<int64_t> binds) {
  try {
    Db db(file, name);
    Stmt q(db, sql);
    for (size_t i = 0; i < binds.size(); ++i) q.bind(int(i) + 1, binds[i]);
    sqlite3_stmt* s = q.handle();
    const int columns = sqlite3_column_count(s);
    // Columns declared INTEGER hold integers nearly always: their type is asked only when the value reads 0
    // (NULL, or text that is not a number), as Stmt::i64_or does; a number-like text there reads as a number.
    std::vector<bool> integer(size_t(columns), false);
    for (int k = 0; k < columns; ++k) {
      const char* d = sqlite3_column_decltype(s, k);
      integer[size_t(k)] = d && std::string_view(d).find("INT") != std::string_view::npos;
    }
    bool more = true;
    while (more) {
      Chunk c;
      c.columns = columns;
      c.value.reserve(kChunkRows * size_t(columns));
      c.length.reserve(kChunkRows * size_t(columns));
      c.type.reserve(kChunkRows * size_t(columns));
      while (c.rows < kChunkRows && (more = q.row())) {
        for (int k = 0; k < columns; ++k) {
          if (integer[size_t(k)]) {
            if (const int64_t v = sqlite3_column_int64(s, k); v != 0) {
              c.value.push_back(v);
              c.length.push_back(0);
              c.type.push_back(kInt);
              continue;
            }
          }
          const int t = sqlite3_column_type(s, k);
          if (t == SQLITE_TEXT || t == SQLITE_BLOB) {
            const char* p = reinterpret_cast<const char*>(t == SQLITE_TEXT ? sqlite3_column_text(s, k) : sqlite3_column_blob(s, k));
            const size_t n = size_t(sqlite3_column_bytes(s, k));
            c.value.push_back(int64_t(c.arena.size()));
            c.length.push_back(uint32_t(n));
            c.type.push_back(kText);
            if (n) c.arena.append(p, n);
          } else {
            c.value.push_back(sqlite3_column_int64(s, k));
            c.length.push_back(0);
            c.type.push_back(t == SQLITE_NULL ? kNull : t == SQLITE_FLOAT ? kFloat : kInt);
          }
        }
        ++c.rows;
      }
      std::unique_lock l(m_);
      cv_.wait(l, [&] { return ready_.size() < kChunksWaiting || stop_; });
      if (stop_) return;
      if (c.rows) ready_.push_back(std::move(c));
      cv_.notify_all();
    }
  } catch (...) {
    std::lock_guard l(m_);
    error_ = std::current_exception();
  }
  std::lock_guard l(m_);
  done_ = true;
  cv_.notify_all();
}

bool Prefetched::row() {
  if (started_ && ++at_ < current_.rows) return true;
  started_ = true;
  std::unique_lock l(m_);
  cv_.wait(l, [&] { return !ready_.empty() || done_; });
  if (ready_.empty()) {
    if (error_) std::rethrow_exception(error_);
    return false;
  }
  current_ = std::move(ready_.front());
  ready_.pop_front();
  cv_.notify_all();
  at_ = 0;
  return true;
}

std::string_view Prefetched::text(int c) const {
  const size_t i = cell(c);
  switch (cur_->type[i]) {
    case kText: return std::string_view(cur_->arena.data() + cur_->value[i], cur_->length[i]);
    case kNull: return std::string_view();
    default: number_ = fmt::format("{}", cur_->value[i]); return number_;
  }
}

}  // namespace shardscope::nsys
