// NCCL's communicators in one export, read once a file before its ranks (a rank's kernels need the others'
// rows): each communicator's size (nranks) and which processes take part, and each process's rank in its
// largest communicator (the world's). From what NCCL wrote itself: its composite table where it has a size
// column (nccl_ops.h), its communicator-init NVTX ranges' payloads (JSON or binary: ncclCommInitRank*,
// ncclCommSplit carry "NCCL communicator ID", "No. of ranks", "Rank"); and, where neither says a size, the
// processes of the file seen using the communicator (its table rows, its ranges' payloads), counted.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

namespace shardscope::sqlite {
class Stmt;
}

namespace shardscope::nsys {

class Export;
using sqlite::Stmt;

// Where a communicator's size came from, as the load's notes and metadata say it.
inline constexpr const char* kSizeFromTable = "NCCL table";
inline constexpr const char* kSizeFromInit = "NCCL comm init";
inline constexpr const char* kSizeFromRanges = "NCCL range payload";
inline constexpr const char* kSizeFromMembers = "ranks in file";

struct CommSize {
  int nranks = 0;  // 0: unknown
  const char* from = "";
  size_t members = 0;  // processes of the file seen using it
};

struct NcclComms {
  std::map<uint64_t, int> table_size;             // commHash -> the composite table's size column
  std::map<uint64_t, int> init_size;              // commHash -> "No. of ranks" of a communicator init
  std::map<uint64_t, std::set<int64_t>> members;  // commHash -> processes (globalTid >> 24) using it
  std::map<int64_t, std::pair<int, int>> ranks;   // process -> (rank, nranks) in its largest communicator
  std::string table_size_column;                  // the composite table's size column, or empty

  // The size of `comm`: the table's, else a communicator init's, else the processes using it where that is
  // at least two (one process of a file may be one report of a per-rank capture: not the group).
  CommSize size(uint64_t comm) const;
};

// Reads both sources once (one scan of the NVTX ranges that have a payload; the composite table's ids).
NcclComms read_nccl_comms(Export& x);

// A communicator id as exports write it: an integer (a 64-bit hash, stored as its signed bits) or text,
// "0x2e43ea04577433ce" or decimal. Nothing for other text.
std::optional<uint64_t> comm_id(std::string_view text);
// Column `c` of the row `q` is on, read as comm_id reads text; nothing for NULL.
std::optional<uint64_t> comm_id(const Stmt& q, int c);

}  // namespace shardscope::nsys
