#include "analyzer/cli/summarize.h"

#include <atomic>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <ostream>

#include <fmt/format.h>

#include "analyzer/analysis/run.h"
#include "analyzer/analysis/summary_file.h"
#include "analyzer/cli/output.h"
#include "analyzer/cli/progress_line.h"
#include "plugins/common/magic.h"
#include "tracer/format/error.h"

namespace shardscope::cli {
namespace fs = std::filesystem;

std::string summary_name(const std::string& trace_path, int rank, const std::vector<std::string>& extensions) {
  std::string n = fs::path(trace_path).filename().string();
  std::vector<std::string_view> strip{plugins::kGzipExtension};
  strip.insert(strip.end(), extensions.begin(), extensions.end());
  for (std::string_view ext : strip)
    if (n.size() > ext.size() && n.compare(n.size() - ext.size(), ext.size(), ext) == 0)
      n.resize(n.size() - ext.size());
  return rank >= 0 ? fmt::format("{}.rank{}.sqlite", n, rank) : n + ".sqlite";
}

int summarize(const std::vector<std::string>& paths, const std::string& out_dir, std::ostream& out, std::ostream& err,
              const plugins::ReadRules& rules) {
  try {
    std::vector<std::string> refusals;  // the load below warns of them
    const plugins::Registry registry = analysis::formats_registry(refusals);
    const std::vector<std::string> extensions = registry.extensions();
    std::set<std::string> several;  // the formats a file of which may hold several ranks
    for (const plugins::Format& f : registry.formats())
      if (f.several_ranks) several.insert(f.name);
    // Two inputs that would write one summary, or a summary over an input, are refused before any work. (A
    // rank's NAME.rankN.sqlite over an input is one of these: that input's own summary has its name.)
    std::map<std::string, std::string> taken;
    std::vector<std::string> inputs;
    for (const fs::path& f : plugins::expand_inputs({paths.begin(), paths.end()}, &registry)) {
      auto [it, fresh] = taken.emplace(summary_name(f.string(), -1, extensions), f.string());
      if (!fresh)
        throw std::invalid_argument(
            fmt::format("{} and {} would both be summarised as {}: summarise them into separate directories",
                        it->second, f.string(), (fs::path(out_dir) / it->first).string()));
      inputs.push_back(f.string());
    }
    for (const auto& [name, from] : taken)
      if (const std::string in = input_at((fs::path(out_dir) / name).string(), inputs); !in.empty())
        throw std::invalid_argument(overwrite_refusal((fs::path(out_dir) / name).string(), in));
    std::error_code ec;
    fs::create_directories(out_dir, ec);
    if (ec || !fs::is_directory(out_dir))
      throw std::invalid_argument(fmt::format("cannot create the output directory {}: {}", out_dir,
                                              ec ? ec.message() : "a file is in the way"));
    std::atomic<uint64_t> written{0}, summary_bytes{0};
    plugins::LoadResult loaded;
    {
      ProgressLine progress;
      loaded = analysis::summarize_each(paths, {.on_progress = progress.callback(), .rules = rules},
                                        analysis::Scope::Everything, [&](analysis::RankSummary&& s) {
                                          // A file of several ranks (an Nsight Systems export holds one a
                                          // process): one summary each.
                                          const int rank = several.count(s.report.format) ? s.report.rank : -1;
                                          const fs::path to =
                                              fs::path(out_dir) / summary_name(s.report.source, rank, extensions);
                                          analysis::write_summary(to, s);
                                          ++written;
                                          summary_bytes += fs::file_size(to, ec);
                                        });
    }
    print_warnings(loaded.warnings, err);
    out << fmt::format("wrote {} rank summar{} to {} ({:.1f} KB, from {:.1f} MB of trace text)\n", written.load(),
                       written == 1 ? "y" : "ies", out_dir, double(summary_bytes) / 1e3,
                       double(loaded.json_bytes) / 1e6);
    return out ? 0 : 2;
  } catch (const std::exception& e) {
    print_error(err, e.what());
    return 2;
  }
}

}  // namespace shardscope::cli
