// `shardscope diff A B`: two runs side by side: metric deltas, and which collectives, device activities and
// FSDP units changed.
#pragma once

#include <iosfwd>
#include <string>

#include "plugins/load/load.h"

namespace shardscope::cli {

int diff(const std::string& a, const std::string& b, const std::string& format, std::ostream& out, std::ostream& err,
         const plugins::ReadRules& rules = {});

}  // namespace shardscope::cli
