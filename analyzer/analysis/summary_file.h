// A rank summary as a file: SQLite, one table per record kind (docs/summaries.md has the schema), so that
// sqlite3, DuckDB or pandas can query many runs at once, and `report`, `check-prefetch` and `diff` read it
// wherever they read a trace.
#pragma once

#include <cstdint>
#include <filesystem>

#include "analyzer/analysis/summary.h"
#include "plugins/api/registry.h"

namespace shardscope::analysis {

// Bumped when a table or column changes meaning; a reader refuses a summary of another version by name.
// 2: collectives' seq and process_group; 3: the whole trace's exact figures, the rule that made the steps,
// Kineto's distributedInfo; 4: the memory model's inputs, as inferred from the trace or given; what the
// activation formula assumes (attention scores kept, the trainer's FFN width), each memory row's bytes where the
// categories hold the most.
inline constexpr int kSummarySchemaVersion = 4;

// The file begins as SQLite does and holds the summary's meta table.
bool is_summary_file(const std::filesystem::path& path);

// Rank summaries as a format (plugins/api/format.h): read by the analysis through LoadOptions::claim, not by
// an importer, and listed with the importers' formats where a run's files are named or chosen.
plugins::Format summary_format();
// The registry the CLI and the viewer list formats from: plugins::default_registry() and summary_format().
plugins::Registry formats_registry(std::vector<std::string>& refusals);

// Writes to a new file beside `path`, then renames it over `path`: a reader never sees half a summary.
// Throws trace::TraceError naming the file.
void write_summary(const std::filesystem::path& path, const RankSummary& summary);

// `order`: the file's place among the inputs. Throws trace::TraceError (file, what) for a file that is not a
// summary of this schema version, or whose tables are damaged.
RankSummary read_summary(const std::filesystem::path& path, uint64_t order);

}  // namespace shardscope::analysis
