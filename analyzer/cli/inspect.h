// `shardscope inspect FILE...`: each file's metadata, tracks with event counts, time span and truncation.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace shardscope::cli {

// Returns the exit code: 0 when every file loaded (a truncated file loads, with a warning), 2 otherwise.
int inspect(const std::vector<std::string>& files, bool as_json, std::ostream& out, std::ostream& err);

}  // namespace shardscope::cli
