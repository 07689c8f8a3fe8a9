// One table's rows for each process of an export in turn, from one statement over the table: ordered by the
// process (its pid, then its key, as Export::processes() orders them) where the file has several, so reading
// every rank costs one pass over the table whatever the number of processes, and only the current process's
// rows are held (a per-process query would scan the whole table once per process: issue #40, 3,700 processes
// took minutes). Reads like Prefetched (row, i64, i64_or, null, text, is_text), on whose thread it steps.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plugins/nsys/nsys_export.h"
#include "plugins/nsys/nvtx_schemas.h"
#include "plugins/nsys/prefetch.h"

namespace shardscope::nsys {

class ProcessRows {
 public:
  // `select`: "SELECT a, b, ..." (the columns read); `id`: the table's process column (globalPid or
  // globalTid), whose key (id >> kTidBits) tells a row's process; empty, or `all` (a file of one process):
  // every row is the process's.
  ProcessRows(Export& x, const std::string& select, const std::string& table, const std::string& id, bool all);

  // Moves to the rows of `key`: rows of processes ordered before it are passed over. Keys come in
  // Export::processes() order.
  void start(int64_t key);
  // The current process's next row: false when it has no more.
  bool row();
  bool null(int c) const { return q_.null(c); }
  bool is_text(int c) const { return q_.is_text(c); }
  int64_t i64(int c) const { return q_.i64(c); }
  int64_t i64_or(int c, int64_t null) const { return q_.i64_or(c, null); }
  std::string_view text(int c) const { return q_.text(c); }

 private:
  Prefetched q_;
  bool keyed_;  // false: every row is the first process's (the only one's, where `all`)
  bool all_;
  int64_t key_ = 0;
  bool started_ = false;
  bool pending_ = false;  // the cursor holds a row not yet handed out (a later process's)
  bool done_ = false;
};

// Each table's ProcessRows for one export, made on a rank's first read of the table and kept for the next
// ranks.
class ProcessScans {
 public:
  ProcessScans(Export& x, bool all) : x_(x), all_(all) {}
  // The rows of `table` for the process `key`, read by `select` (the same for every process).
  ProcessRows& of(int64_t key, const std::string& select, const std::string& table, const std::string& id);
  // NVTX payload schemas, read where a rank first meets a binary payload, and what they lack: once a file.
  const NvtxSchemas& schemas() {
    if (!schemas_) schemas_.emplace(x_, schema_missing_);
    return *schemas_;
  }
  const std::vector<std::string>& schema_missing() const { return schema_missing_; }

 private:
  Export& x_;
  bool all_;
  std::map<std::string, std::unique_ptr<ProcessRows>, std::less<>> by_table_;
  std::optional<NvtxSchemas> schemas_;
  std::vector<std::string> schema_missing_;
};

}  // namespace shardscope::nsys
