#include "analyzer/report/follow_render.h"

#include <algorithm>

#include <fmt/format.h>

#include "analyzer/report/report_keys.h"

namespace shardscope::report {

namespace k = report_keys;

namespace {
std::string ms(int64_t ns) { return fmt::format("{:.3f} ms", double(ns) / 1e6); }
}  // namespace

std::string follow_line(const analysis::FollowedStep& s) {
  std::string line = fmt::format("step {}:", s.number);
  if (s.ranks.empty()) return line + " no rank measured it";
  // The slowest rank sets the step's time in a synchronous job: its figures stand for the step.
  const auto& slow = *std::max_element(s.ranks.begin(), s.ranks.end(),
                                       [](const auto& a, const auto& b) { return a.m.window_ns < b.m.window_ns; });
  line += fmt::format(" {} on rank {}{} (comm {}, exposed {})", ms(slow.m.window_ns), slow.rank,
                      s.ranks.size() > 1 ? ", the slowest" : "", ms(slow.m.comm_ns), ms(slow.m.exposed_ns()));
  std::vector<int> aborted;
  for (const auto& r : s.ranks)
    if (r.step.aborted) aborted.push_back(r.rank);
  if (!aborted.empty()) line += fmt::format("; did not complete on rank {}", fmt::join(aborted, ", "));
  if (s.late_rank)
    line += fmt::format("; late: rank {}, last at {} of {} collectives", *s.late_rank, s.late_count, s.instances);
  else if (s.ranks.size() > 1)
    line += "; late: none (no collective matched across ranks)";
  return line;
}

nlohmann::json follow_json(const analysis::FollowedStep& s) {
  nlohmann::json o;
  o[k::kStep] = s.number;
  o[k::kRanks] = nlohmann::json::array();
  for (const auto& r : s.ranks) {
    nlohmann::json x = {{k::kRank, r.rank},        {k::kStepNs, r.m.window_ns},     {k::kComputeNs, r.m.compute_ns},
                        {k::kCommNs, r.m.comm_ns}, {k::kOverlapNs, r.m.overlap_ns}, {k::kExposedNs, r.m.exposed_ns()}};
    if (r.step.aborted) x[k::kAborted] = true;
    o[k::kRanks].push_back(std::move(x));
  }
  o[k::kLastRank] = s.late_rank ? nlohmann::json(*s.late_rank) : nlohmann::json(nullptr);
  o[k::kTimesLast] = s.late_count;
  o[k::kInstances] = s.instances;
  return o;
}

}  // namespace shardscope::report
