#include "viewer/model/flows.h"

namespace shardscope::viewer {

std::vector<Flow> launch_flows(const model::RankIndex& index, uint32_t rank, model::EventRef selected) {
  std::vector<Flow> out;
  if (const model::LaunchLink* l = index.launch_of(selected)) {
    out.push_back({{rank, l->launch}, {rank, l->device}});
    return out;
  }
  // The launches are sorted by device event, not by host call: a walk, done on a selection change's paint.
  for (const model::LaunchLink& l : index.launches)
    if (l.launch == selected) out.push_back({{rank, l.launch}, {rank, l.device}});
  return out;
}

CollectiveFlows collective_flows(const AcrossRanks& across, uint32_t rank, model::EventRef selected) {
  CollectiveFlows out;
  std::optional<metrics::InstanceId> id = across.instance_of(rank, selected);
  if (!id) return out;
  const metrics::StragglerInstance* s = across.straggler(*id);
  for (uint32_t r = 0; r < across.rank_count(); ++r)
    if (std::optional<model::EventRef> e = across.find(r, *id)) {
      if (s && across.rank_number(r) == s->last_rank) out.last = out.ends.size(), out.late_by_ns = s->late_by_ns;
      out.ends.push_back({r, *e});
    }
  if (out.ends.size() < 2) return {};
  for (size_t i = 0; i < out.ends.size(); ++i) {
    if (out.last && i != *out.last) out.links.push_back({out.ends[i], out.ends[*out.last]});
    else if (!out.last && i + 1 < out.ends.size())
      out.links.push_back({out.ends[i], out.ends[i + 1]});
  }
  return out;
}

}  // namespace shardscope::viewer
