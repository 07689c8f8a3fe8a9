// `shardscope whatif RUN --backward-prefetch ... --comm-speed X ...`: the measured run replayed with a change
// (metrics/whatif.h), answer first.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "analyzer/metrics/whatif.h"
#include "plugins/load/load.h"

namespace shardscope::cli {

// Exit code 0, or 2 with one error line (nothing to replay, a file that cannot be read).
int whatif(const std::vector<std::string>& paths, const metrics::WhatIfChange& change, const std::string& format,
           std::ostream& out, std::ostream& err, const plugins::ReadRules& rules = {});

}  // namespace shardscope::cli
