// `report --mpi` in a build without MPI.
#include <ostream>

#include "analyzer/cli/report.h"

namespace shardscope::cli {

int report_mpi(const std::vector<std::string>&, const std::string&, const std::string&, std::ostream&,
               std::ostream& err, const plugins::ReadRules&, const report::Selection&, const std::string&,
               const metrics::MemoryGiven&) {
  err << "shardscope: error: --mpi: this shardscope was built without MPI (install OpenMPI, libopenmpi-dev on Debian, "
         "and build again)\n";
  return 2;
}

}  // namespace shardscope::cli
