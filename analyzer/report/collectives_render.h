// The wording of the collectives table's reasons (metrics/collectives.h), shared by every renderer.
#pragma once

#include <string>

#include "analyzer/metrics/collectives.h"

namespace shardscope::report {

// "n/a: no message size in the trace", ...; "" for CollectiveNa::None.
std::string na_text(metrics::CollectiveNa why, model::CollectiveKind kind);
// How the instances were matched across ranks: "by process group and sequence number", ...
std::string pairing_text(metrics::Pairing p);
// Why a rank's wait share is missing: one rank, or ranks whose instance counts differ.
std::string wait_na_text();
// "3 of 8 instances carry a message size: MB and bandwidths count those only", or "" when all or none do.
std::string partly_sized_text(const metrics::CollectiveStats& c);

}  // namespace shardscope::report
