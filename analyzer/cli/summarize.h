// `shardscope summarize PATH... -o DIR`: one SQLite summary per rank (docs/summaries.md), which `report`,
// `check-prefetch` and `diff` read wherever they read traces.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "plugins/load/load.h"

namespace shardscope::cli {

// The summary a trace file's rank goes to: its name without ".gz" and the formats' `extensions`
// (Registry::extensions: .json, .sqlite), then ".sqlite"; with `rank` (a file of several ranks: an Nsight
// Systems report), ".rankN.sqlite".
std::string summary_name(const std::string& trace_path, int rank, const std::vector<std::string>& extensions);

// Returns the exit code: 0, or 2 when an input cannot be read or a summary cannot be written (message on err).
int summarize(const std::vector<std::string>& paths, const std::string& out_dir, std::ostream& out, std::ostream& err,
              const plugins::ReadRules& rules = {});

}  // namespace shardscope::cli
