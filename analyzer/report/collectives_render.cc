#include "analyzer/report/collectives_render.h"

#include <fmt/format.h>

namespace shardscope::report {

std::string na_text(metrics::CollectiveNa why, model::CollectiveKind kind) {
  switch (why) {
    case metrics::CollectiveNa::None: return "";
    case metrics::CollectiveNa::NoMessageSize: return "n/a: no message size in the trace";
    case metrics::CollectiveNa::SizedTakeNoTime: return "n/a: the sized instances take no time";
    case metrics::CollectiveNa::NoGroupSizeForBusbw:
      return fmt::format("n/a: the trace does not say the group size, which the bus bandwidth of {} needs",
                         model::to_string(kind));
    case metrics::CollectiveNa::NoGroupSize: return "n/a: the trace does not say the group size";
  }
  return "";
}

std::string pairing_text(metrics::Pairing p) {
  switch (p) {
    case metrics::Pairing::None: return "";
    case metrics::Pairing::Sequence: return "by process group and sequence number";
    case metrics::Pairing::Position:
      return "by position, the n-th of a kind on each rank (the traces carry no sequence numbers)";
    case metrics::Pairing::Mixed: return "by sequence number where the traces carry one, by position elsewhere";
  }
  return "";
}

std::string wait_na_text() {
  return "n/a: the ranks have different numbers of these instances, so no instance is matched with certainty";
}

std::string partly_sized_text(const metrics::CollectiveStats& c) {
  if (!c.partly_sized()) return "";
  return fmt::format("{} of {} instances carry a message size: MB and bandwidths count those only", c.sized_count,
                     c.count);
}

}  // namespace shardscope::report
