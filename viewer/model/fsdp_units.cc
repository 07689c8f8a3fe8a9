#include "viewer/model/fsdp_units.h"

#include <map>

#include "tracer/format/keys.h"

namespace shardscope::viewer {

std::string unit_label(const model::Rank& rank, int unit) {
  std::string label = "unit " + std::to_string(unit);
  if (std::string name = rank.shape.unit_name(unit); !name.empty()) label += " · " + name;
  return label;
}

std::vector<DerivedRow> fsdp_unit_rows(const model::Rank& rank) {
  const model::StringId fwd = rank.strings.find(keys::kUnitForward), bwd = rank.strings.find(keys::kUnitBackward),
                        derived = rank.strings.find(keys::kCatFsdp);
  // Per unit, each kind of event in two versions: the device's (NCCL kernels, device-time unit ranges) and
  // the host's (the ranges that issued them). Which is kept is known only at the end of the pass: the
  // device's where the rank has any, so that a unit's all-gather is not drawn twice; the host's otherwise
  // (a CPU run, where they are the communication, or a GPU run whose collectives launched no kernel).
  struct Refs {
    std::vector<model::EventRef> comm_device, comm_host, compute_device, compute_host;
  };
  std::map<int, Refs> units;
  bool any_comm_device = false, any_compute_device = false;
  for (uint32_t t = 0; t < rank.tracks.size(); ++t) {
    const std::vector<model::Event>& events = rank.tracks[t].events;
    for (uint32_t i = 0; i < events.size(); ++i) {
      const model::Event& e = events[i];
      if (e.unit < 0 || e.ph != 'X') continue;
      if (e.cls == model::IntervalClass::Communication) {
        units[e.unit].comm_device.push_back({t, i});
        any_comm_device = true;
      } else if (e.coll != model::CollectiveKind::None) {
        units[e.unit].comm_host.push_back({t, i});
      } else if (e.name == fwd || e.name == bwd) {  // find() gives an id no event has when absent
        const bool is_derived = e.cat == derived;
        any_compute_device |= is_derived;
        (is_derived ? units[e.unit].compute_device : units[e.unit].compute_host).push_back({t, i});
      }
    }
  }
  std::vector<DerivedRow> rows;
  for (auto& [unit, r] : units) {
    std::vector<model::EventRef> refs = std::move(any_comm_device ? r.comm_device : r.comm_host);
    const std::vector<model::EventRef>& compute = any_compute_device ? r.compute_device : r.compute_host;
    refs.insert(refs.end(), compute.begin(), compute.end());
    if (refs.empty()) continue;
    rows.push_back(make_derived_row(rank, RowGroup::FsdpUnits, unit_label(rank, unit), std::move(refs)));
  }
  return rows;
}

}  // namespace shardscope::viewer
