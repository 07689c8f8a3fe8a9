// The viewer's file dialogs and usage line name the formats the registry knows (plugins/api/format.h), not a
// list of their own: a plugin's format, or rank summaries, show up there as soon as they are registered.
#pragma once

#include <string>
#include <vector>

#include "plugins/api/registry.h"

namespace shardscope::viewer {

// The Open dialog's name filter (Qt's syntax): "Traces (*.json *.json.gz *.sqlite *.sqlite.gz *.gz);;All
// files (*)": each extension, it gzip'd, then any gzip file (the loader inflates whatever it holds).
std::string open_filter(const std::vector<plugins::Format>& formats);

// The registry the viewer lists and tells formats by: the built-in importers, SHARDSCOPE_PLUGIN_PATH's
// plugins and rank summaries (its refusals are reported by the load that follows).
plugins::Registry viewer_formats();

}  // namespace shardscope::viewer
