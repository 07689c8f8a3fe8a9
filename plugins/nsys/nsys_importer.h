// Nsight Systems reports exported to SQLite (`nsys export --type sqlite`): one file may hold several
// processes, each of which becomes a rank, built one process at a time from one pass over each table
// (process_rows.h).
#pragma once

#include "plugins/api/format.h"
#include "plugins/api/importer.h"
#include "plugins/common/magic.h"

namespace shardscope::plugins {

class NsysImporter : public Importer, public Described, public KnowsUnread {
 public:
  std::string name() const override { return "nsys"; }
  Format format() const override {
    return {.name = name(),
            .title = "Nsight Systems SQLite exports",
            .extensions = {".sqlite"},
            .magic = std::string(kSqliteMagic),
            .several_ranks = true};
  }
  std::vector<NotRead> not_read() const override {
    const std::string how = "nsys export --type sqlite --output FILE.sqlite FILE";
    return {{".nsys-rep", "an Nsight Systems report; shardscope reads its SQLite export", how},
            {".qdrep", "an Nsight Systems report (before 2021.4); shardscope reads its SQLite export", how}};
  }
  // Every SQLite database begins "SQLite format 3\0"; read() says when one is not an Nsight export.
  bool can_read(std::string_view head) const override;
  bool reads_file() const override { return true; }
  // The first rank only (read_ranks gives them all).
  model::Rank read(Input in) const override;
  void read_ranks(Input in, bool keep_args, const EachRank& each) const override;
};

}  // namespace shardscope::plugins
