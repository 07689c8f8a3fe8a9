// `shardscope inspect FILE...`: each file's metadata, tracks with event counts, time span and truncation.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "plugins/api/registry.h"

namespace shardscope::cli {

// Returns the exit code: 0 when every file loaded (a truncated file loads, with a warning), 2 otherwise.
// `registry`: the formats to tell the files by and read them with; nullptr: the built-in ones, the plugins
// in SHARDSCOPE_PLUGIN_PATH and rank summaries.
int inspect(const std::vector<std::string>& files, bool as_json, std::ostream& out, std::ostream& err,
            const plugins::Registry* registry = nullptr);

}  // namespace shardscope::cli
