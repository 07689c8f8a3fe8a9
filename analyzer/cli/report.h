// `shardscope report PATH... [--format text|md|json|html] [-o FILE|-] [--mpi]`
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "analyzer/analysis/report.h"
#include "analyzer/cli/output.h"
#include "analyzer/report/render.h"

#include "plugins/load/load.h"

namespace shardscope::cli {

// Returns the exit code: 0, or 2 when an input cannot be read (the message goes to err).
int report(const std::vector<std::string>& paths, const std::string& format, const std::string& output,
           std::ostream& out, std::ostream& err, const plugins::ReadRules& rules = {},
           const report::Selection& sel = {}, const metrics::MemoryGiven& given = {});

// The memory model's inputs given as flags (--params, --sharding, --world-size, --dtype, --optimizer), over
// every rank's, and its predictions made again.
void give_memory(report::Report& r, const metrics::MemoryGiven& given);

// The report in each of its formats (write_result picks one); the selection picks the text's, markdown's and
// HTML's details (the JSON holds everything).
Result report_result(const report::Report& r, const report::Selection& sel);

// `report --mpi`, in every process of an MPI job (mpirun, srun): each process summarises its share of the
// rank files (or, with `files_per_process`, the files that pattern names for it: {rank}, {local_rank}),
// the processes reduce them to process 0, which writes the report. Every process returns the same exit
// code; an error on any process is printed by process 0. Returns 2 with a message when built without MPI.
int report_mpi(const std::vector<std::string>& paths, const std::string& format, const std::string& output,
               std::ostream& out, std::ostream& err, const plugins::ReadRules& rules = {},
               const report::Selection& sel = {}, const std::string& files_per_process = "",
               const metrics::MemoryGiven& given = {});

}  // namespace shardscope::cli
