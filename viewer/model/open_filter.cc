#include "viewer/model/open_filter.h"

#include <algorithm>

#include "analyzer/analysis/summary_file.h"
#include "plugins/common/magic.h"

namespace shardscope::viewer {

std::string open_filter(const std::vector<plugins::Format>& formats) {
  std::vector<std::string> patterns;
  auto add = [&](std::string p) {
    if (std::find(patterns.begin(), patterns.end(), p) == patterns.end()) patterns.push_back(std::move(p));
  };
  for (const plugins::Format& f : formats)
    for (const std::string& e : f.extensions) {
      add("*" + e);
      add("*" + e + std::string(plugins::kGzipExtension));
    }
  add("*" + std::string(plugins::kGzipExtension));
  std::string out = "Traces (";
  for (size_t i = 0; i < patterns.size(); ++i) out += (i ? " " : "") + patterns[i];
  return out + ");;All files (*)";
}

plugins::Registry viewer_formats() {
  std::vector<std::string> refusals;
  return analysis::formats_registry(refusals);
}

}  // namespace shardscope::viewer
