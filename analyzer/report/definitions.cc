#include "analyzer/report/definitions.h"

#include <map>

namespace shardscope::report {
namespace {

using Columns = std::map<std::string, std::string>;

// Per step, W is the step's window, C the union of compute on the device timeline, M of communication.
const std::map<std::string, Columns>& tables() {
  static const std::map<std::string, Columns> t = {
      {"step",
       {{"time ms", "|W|, the step's window on the device timeline"},
        {"compute ms", "|C|, time any compute ran in the window (overlapped time included)"},
        {"comm ms", "|M|, time any communication ran in the window"},
        {"overlapped ms", "|M ∩ C|, communication while compute ran"},
        {"exposed ms", "|M| - |M ∩ C|, communication while no compute ran"},
        {"overlap %", "overlapped / comm"},
        {"comm %", "comm / time"},
        {"exposed %", "exposed / time"},
        {"idle ms", "|W| - |any device activity|"}}},
      {"collective",
       {{"MB (1e6 B)", "bytes moved (1e6): all-gather's gathered output, reduce-scatter's input, as nccl-tests counts"},
        {"time ms", "the kernels' summed durations"},
        {"algbw GB/s (1e9 B/s)", "bytes / time, 1e9 bytes a second"},
        {"busbw GB/s (1e9 B/s)",
         "algbw x the bus factor: all-reduce 2(n-1)/n, all-gather, reduce-scatter and all-to-all (n-1)/n, others 1 "
         "(nccl-tests)"},
        {"group", "n, the ranks in the collective's group"},
        {"wait %",
         "(time - the fastest rank's time at the same instances) / time: waiting for peers (skew), not transfer"}}},
      // The other columns read as in the collective table.
      {"link",
       {{"instances", "those every rank has"},
        {"fastest ms",
         "Σ of each instance's fastest rank's time: the link's time without waiting for peers; algbw and busbw over "
         "it"}}},
      {"unit i",
       {{"AG of unit", "i-1, the unit whose all-gather unit i's backward compute should hide"},
        {"issue lead µs",
         "when unit i's backward compute was issued minus when the all-gather was; above 0 is prefetch order"},
        {"hidden %", "share of the all-gather's time during which any compute ran"},
        {"exposed wait µs", "the part of the all-gather no compute covered before unit i-1's backward compute began"},
        {"queued µs", "the all-gather's start minus its issue"},
        {"late peer", "the rank that arrived last at this all-gather, and by how much after this rank"}}},
      {"memory",
       {{"measured MB", "the peak of the category's counter in the trace"},
        {"predicted MB", "the ZeRO model's peak for it from the run's config (- : not a category)"},
        {"at fullest MB",
         "the bytes when the categories together held the most; with rest (what no category counts: free cached "
         "blocks, CUDA context, NCCL/cuBLAS buffers; cached_free + other_allocated (+ outside_allocator) where the "
         "trace gives the reserved total) they add up to allocator_total"}}},
      {"alive at the peak",
       {{"MB",
         "bytes of the allocations made so and still allocated at the rank's peak (paired with frees by address)"},
        {"allocations", "how many"},
        {"predicted MB", "the ZeRO model's peak for the category it stands beside"}}},
      {"top device activity",
       {{"class", "compute, communication (with the collective it carries out), memory, sync or other"},
        {"count", "events of that name"},
        {"time ms", "their summed durations on the device"}}},
      {"rank",
       {{"times last", "collective instances at which this rank arrived last"},
        {"total late ms", "summed, by how much it arrived after the next-latest rank"},
        {"max late ms", "the most it arrived after the next-latest rank"}}},
  };
  return t;
}

}  // namespace

const std::string& definition(const std::string& table, const std::string& column) {
  static const std::string none;
  auto t = tables().find(table);
  if (t == tables().end()) return none;
  auto c = t->second.find(column);
  return c == t->second.end() ? none : c->second;
}

std::string legend(const std::vector<std::string>& header, const std::string& indent) {
  if (header.empty()) return "";
  std::string out, line;
  for (const std::string& c : header) {
    const std::string& d = definition(header.front(), c);
    if (d.empty()) continue;
    std::string item = c + " = " + d;
    if (!line.empty() && line.size() + item.size() > 200) out += indent + line + ";\n", line.clear();
    line += (line.empty() ? (out.empty() ? "legend: " : "  ") : "; ") + item;
  }
  if (!line.empty()) out += indent + line + "\n";
  return out;
}

nlohmann::json definitions_json() {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [table, columns] : tables())
    for (const auto& [c, d] : columns) j[table][c] = d;
  return j;
}

}  // namespace shardscope::report
