#include "plugins/nsys/prefetch.h"

#include <sqlite3.h>

#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "plugins/nsys/nsys_db.h"

namespace shardscope::nsys {

namespace {
constexpr size_t kChunkRows = 16384;
constexpr size_t kChunksWaiting = 4;
}  // namespace

Prefetched::Prefetched(const Db& db, const std::string& file, std::string sql, std::vector<int64_t> binds,
                       Reading how) {
  if (how == Reading::kBySize) {
    std::error_code ec;
    const uint64_t size = std::filesystem::file_size(file, ec);
    how = !ec && size >= kThreadFrom ? Reading::kThread : Reading::kInline;
  }
  if (how == Reading::kInline) {
    inline_ = std::make_unique<Stmt>(db, sql);
    for (size_t i = 0; i < binds.size(); ++i) inline_->bind(int(i) + 1, binds[i]);
    inline_integer_ = integer_columns(*inline_);
    return;
  }
  worker_ = std::thread(&Prefetched::work, this, file, db.name(), std::move(sql), std::move(binds));
}

Prefetched::~Prefetched() {
  if (!worker_.joinable()) return;
  {
    std::lock_guard l(m_);
    stop_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

// Columns declared INTEGER hold integers nearly always: their type is asked only when the value reads 0
// (NULL, or text that is not a number), as Stmt::i64_or does; a number-like text there reads as a number.
std::vector<bool> Prefetched::integer_columns(Stmt& q) {
  sqlite3_stmt* s = q.handle();
  const int columns = sqlite3_column_count(s);
  std::vector<bool> integer(size_t(columns), false);
  for (int k = 0; k < columns; ++k) {
    const char* d = sqlite3_column_decltype(s, k);
    integer[size_t(k)] = d && std::string_view(d).find("INT") != std::string_view::npos;
  }
  return integer;
}

bool Prefetched::fill(Stmt& q, const std::vector<bool>& integer, Chunk& c) {
  sqlite3_stmt* s = q.handle();
  const int columns = int(integer.size());
  c.columns = columns;
  c.rows = 0;
  c.value.clear();
  c.length.clear();
  c.type.clear();
  c.arena.clear();
  c.value.reserve(kChunkRows * size_t(columns));
  c.length.reserve(kChunkRows * size_t(columns));
  c.type.reserve(kChunkRows * size_t(columns));
  bool more = true;
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
        const char* p =
            reinterpret_cast<const char*>(t == SQLITE_TEXT ? sqlite3_column_text(s, k) : sqlite3_column_blob(s, k));
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
  return more;
}

void Prefetched::work(std::string file, std::string name, std::string sql, std::vector<int64_t> binds) {
  try {
    Db db(file, name);
    Stmt q(db, sql);
    for (size_t i = 0; i < binds.size(); ++i) q.bind(int(i) + 1, binds[i]);
    const std::vector<bool> integer = integer_columns(q);
    bool more = true;
    while (more) {
      Chunk c;
      more = fill(q, integer, c);
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
  if (inline_) {
    at_ = 0;
    if (!inline_more_) return false;
    inline_more_ = fill(*inline_, inline_integer_, current_);
    return current_.rows > 0;
  }
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
