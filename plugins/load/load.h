// Loads a run: expands directories into their trace files, picks an importer per file from its first bytes,
// and imports the files in parallel (one rank per file), with a progress line on a terminal.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "analyzer/model/trace.h"
#include "plugins/api/registry.h"

namespace shardscope::plugins {

struct LoadOptions {
  const Registry* registry = nullptr;  // nullptr: the built-in importers plus SHARDSCOPE_PLUGIN_PATH
  bool progress = false;               // a progress line on stderr when stderr is a terminal and it takes > 1 s
                                       // (SHARDSCOPE_PROGRESS_AFTER_MS overrides the 1 s)
  unsigned threads = 0;                // 0: one per core
};

struct LoadResult {
  model::Trace trace;
  std::vector<std::string> warnings;  // truncation, refused plugins, ranks guessed or repeated
  uint64_t json_bytes = 0;            // text parsed (inflated size)
};

// The trace files a path names: the file itself, or a directory's *.json / *.json.gz / *.gz files (sorted).
// Throws trace::TraceError for a missing path or a directory without trace files.
std::vector<std::filesystem::path> expand_inputs(const std::vector<std::filesystem::path>& paths);

// Throws trace::TraceError (file, byte, what) for the first file that cannot be read: missing, corrupt,
// of no known format, or malformed.
LoadResult load(const std::vector<std::filesystem::path>& paths, const LoadOptions& options = {});

// The registry the CLI uses: built-ins plus the plugins in SHARDSCOPE_PLUGIN_PATH (refusals appended).
Registry default_registry(std::vector<std::string>& refusals);

}  // namespace shardscope::plugins
