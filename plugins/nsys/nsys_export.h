// One Nsight Systems export opened for reading: what it holds (tables and columns, noted when absent), its
// strings, its session start, and its processes as ranks. nsys_rank.h reads one process into a rank.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "plugins/nsys/nccl_comms.h"
#include "plugins/nsys/nsys_db.h"

namespace shardscope::nsys {

struct Process {
  int64_t key = 0;  // globalPid >> 24: the process (with its VM bits), the same in globalTid >> 24
  int64_t pid = 0;
  std::string name;
  int rank = -1;  // -1: the file does not say
  int world_size = 0;
  std::string rank_from;  // "RANK", "NCCL", "pid order"
};

// The first few of `said`, then how many more ("a, b, c, d, ... and 9996 more"): a list that grows with the
// processes or communicators of a file is said in a line.
std::string first_few(const std::vector<std::string>& said);

// "NAME (view), ... skipped (...)" for the views and virtual tables named like the
// tables the importer asked `db` about, or "".
std::string skipped_note(const Db& db);

class Export {
 public:
  // Opens and checks the file. Throws trace::TraceError for a database that is not an Nsight export.
  Export(const std::string& file, const std::string& name);

  Db db;
  std::string file;                  // what was opened (a second connection opens it again: prefetch.h)
  std::vector<std::string> missing;  // tables and columns looked for and not found
  std::vector<std::string> unread;   // tables of GPU work with rows the importer does not read (nsys_keys.h)
  std::string schema_version, product_version;
  bool has_base = false;
  int64_t base_ns = 0;  // TARGET_INFO_SESSION_START_TIME.utcEpochNs: added to every time
  NcclComms comms;      // NCCL's communicators over the whole file: read by processes()

  // A StringIds value, or empty.
  const std::string& str(int64_t id) const;
  // The column `col` of `table` as SQL: its quoted name, or NULL (noted as missing) when absent.
  std::string column(std::string_view table, std::string_view col);
  // The processes with CUDA work (or, in a capture without, NVTX ranges), ranks assigned, by pid; reads
  // `comms` first (NCCL's ranks are one of the sources).
  std::vector<Process> processes(std::vector<std::string>& warnings);

 private:
  std::unordered_map<int64_t, std::string> strings_;
  void read_meta();
};

}  // namespace shardscope::nsys
