#include "plugins/nsys/nsys_importer.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "plugins/nsys/nsys_export.h"
#include "plugins/nsys/nsys_keys.h"
#include "plugins/nsys/nsys_rank.h"
#include "tracer/format/error.h"

namespace shardscope::plugins {

bool NsysImporter::can_read(std::string_view head) const { return is_sqlite(head); }

model::Rank NsysImporter::read(Input in) const {
  const std::string path = in.path;
  std::optional<model::Rank> first;
  read_ranks(std::move(in), false, [&](model::Rank&& r, model::EventArgs&&) {
    if (!first) first = std::move(r);
  });
  if (!first) throw trace::TraceError(path, 0, "no process in this export");
  return std::move(*first);
}

void NsysImporter::read_ranks(Input in, bool keep_args, const EachRank& each) const {
  const std::string& file = in.file.empty() ? in.path : in.file;
  nsys::Export x(file, in.path);
  std::vector<std::string> warnings;
  std::vector<nsys::Process> processes = x.processes(warnings);
  if (!x.db.skipped().empty())
    warnings.push_back(fmt::format("{}: {}; read as absent", in.path, nsys::skipped_note(x.db)));
  // Each table read once for all processes, in their order (process_rows.h).
  nsys::ProcessScans scans(x, processes.size() == 1);
  for (const nsys::Process& p : processes) {
    // The file's warnings once, with its first rank.
    const bool first = &p == &processes.front();
    model::EventArgs args;
    model::Rank r = nsys::read_rank(x, scans, p, first, keep_args ? &args : nullptr);
    if (first) r.warnings.insert(r.warnings.begin(), warnings.begin(), warnings.end());
    each(std::move(r), std::move(args));
  }
}

}  // namespace shardscope::plugins
