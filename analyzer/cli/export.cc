#include "analyzer/cli/export.h"

#include <algorithm>
#include <climits>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <ostream>

#include <fmt/format.h>

#include "analyzer/analysis/run.h"
#include "analyzer/analysis/summary_file.h"
#include "analyzer/cli/output.h"
#include "analyzer/report/perfetto.h"

namespace shardscope::cli {

namespace fs = std::filesystem;

int export_perfetto(const std::vector<std::string>& paths, const std::string& output, std::ostream& out,
                    std::ostream& err, const plugins::ReadRules& rules) {
  return guarded(err, [&] {
    std::vector<std::string> refusals;
    const plugins::Registry registry = plugins::default_registry(refusals);
    print_warnings(refusals, err);
    // A rank summary keeps the findings but not the events a timeline shows: refused before anything is read.
    const std::vector<fs::path> files =
        plugins::expand_inputs(std::vector<fs::path>(paths.begin(), paths.end()), &registry);
    for (const fs::path& f : files)
      if (analysis::is_summary_file(f))
        throw std::runtime_error(
            fmt::format("{}: a rank summary holds no events to show on a timeline: export the traces it was made from",
                        f.string()));
    // The first pass: the run's collective instances (who arrived last at each), and its earliest first
    // event on the wall clock, which the file calls 0.
    metrics::InstanceTable table;
    int64_t origin = INT64_MAX;
    std::mutex mu;
    plugins::LoadOptions options{.registry = &registry, .rules = rules};
    const plugins::LoadResult loaded =
        analysis::summarize_each(paths, options, analysis::Scope::Everything, [&](analysis::RankSummary&& s) {
          metrics::InstanceTable one;
          one.add(s.arrivals);
          std::lock_guard lock(mu);
          table.merge(one);
          if (s.header.wall_start) origin = std::min(origin, *s.header.wall_start);
        });
    print_warnings(loaded.warnings, err);
    if (origin == INT64_MAX) origin = 0;  // no rank maps its clock: each keeps its own

    // The second: each rank written as it is read, one at a time and in file order.
    std::ofstream file;
    const bool to_file = !output.empty() && output != "-";
    if (to_file) {
      file.open(output, std::ios::binary | std::ios::trunc);
      if (!file) throw std::runtime_error(fmt::format("{}: cannot write: {}", output, std::strerror(errno)));
    }
    std::ostream& dest = to_file ? file : out;
    try {
      report::PerfettoWriter writer(dest, table, origin);
      options.threads = 1;
      plugins::load_each(files, options, [&](plugins::LoadedRank& r) { writer.rank(r.rank, r.order); });
      writer.finish();
      dest.flush();
      if (!dest) throw std::runtime_error(fmt::format("{}: the write failed", to_file ? output : "stdout"));
    } catch (...) {
      if (to_file) file.close(), fs::remove(output);
      throw;
    }
    return 0;
  });
}

}  // namespace shardscope::cli
