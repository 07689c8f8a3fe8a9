// `shardscope check-prefetch PATH...`: SPEC's BACKWARD_PRE verification as a CI gate.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "analyzer/report/render.h"

#include "plugins/load/load.h"

namespace shardscope::cli {

// Exit code: 0 every checked step effective, 1 some step not effective, 2 error or nothing to check.
// Text: the verdict first, then the worst rank's steps (`sel` picks others), per-unit rows with `units`.
// Not effective, and `whatif`: what the replay with BACKWARD_PRE predicts it would save (metrics/whatif.h;
// the files are read again for it; nothing is said where they cannot be replayed).
int check_prefetch(const std::vector<std::string>& paths, const std::string& format, std::ostream& out,
                   std::ostream& err, const plugins::ReadRules& rules = {}, const report::Selection& sel = {},
                   bool units = false, bool whatif = true);

}  // namespace shardscope::cli
