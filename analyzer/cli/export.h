// `shardscope export PATH... --perfetto [-o FILE|-]`: the run as one Chrome-trace JSON timeline that
// ui.perfetto.dev opens, every rank clock-aligned, shardscope's findings on tracks of their own
// (report/perfetto.h).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "plugins/load/load.h"

namespace shardscope::cli {

// Two passes over the files: the first folds every rank's collective arrivals into the run's table (a
// summary at a time), the second writes each rank as it is read, one at a time. Returns the exit code: 0, or
// 2 when an input cannot be read or the output cannot be written (the message on err; a file that was begun
// is removed).
int export_perfetto(const std::vector<std::string>& paths, const std::string& output, std::ostream& out,
                    std::ostream& err, const plugins::ReadRules& rules = {});

}  // namespace shardscope::cli
