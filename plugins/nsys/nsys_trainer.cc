#include "plugins/nsys/nsys_trainer.h"

#include <algorithm>
#include <unordered_set>

#include "model/classify.h"
#include "model/steps.h"
#include "tracer/format/keys.h"

namespace shardscope::nsys {

namespace {

const char* category_of(std::string_view name) {
  if (name == keys::kStepRange) return keys::kCatStep;
  if (name == keys::kForwardPhase || name == keys::kBackwardPhase || name == keys::kOptimizerPhase)
    return keys::kCatPhase;
  if (name == keys::kUnitForward || name == keys::kUnitBackward) return keys::kCatCompute;
  if (name == keys::kAllGather || name == keys::kReduceScatter || name == keys::kAllReduce) return keys::kCatComm;
  return nullptr;
}

}  // namespace

bool is_trainer_range(std::string_view name) { return category_of(name) != nullptr; }

TrainerStats apply_trainer(model::Rank& r, TrainerInput& in) {
  TrainerStats s;
  const model::StringId fwd = r.strings.find(keys::kUnitForward), bwd = r.strings.find(keys::kUnitBackward);
  const bool any_compute = std::any_of(in.ranges.begin(), in.ranges.end(), [&](const TrainerRange& t) {
    const model::StringId n = r.tracks[t.track].events[t.index].name;
    return n == fwd || n == bwd;  // find() gives kNoString, which no event has, for a name never seen
  });
  if (!any_compute) return s;

  plugins::gpu_join::Input join;
  join.api = std::move(in.api);
  join.device = std::move(in.device);
  std::vector<model::Step> steps;
  std::unordered_set<uint32_t> trainer_tracks;
  for (const TrainerRange& t : in.ranges) {
    model::Event& e = r.tracks[t.track].events[t.index];
    const std::string_view name = r.str(e.name);
    const char* cat = category_of(name);
    e.cat = r.strings.intern(cat);
    trainer_tracks.insert(t.track);
    const bool known = t.payload != model::kUnknown;
    const bool is_unit = t.payload >= 0 && t.payload <= INT32_MAX;
    const plugins::gpu_join::Ref ref{t.track, t.index};
    if (cat == std::string_view(keys::kCatStep)) {
      if (!known) ++s.without_payload;
      steps.push_back({known ? t.payload : int64_t(steps.size()), e.ts_ns, e.end_ns(), e.ts_ns, e.end_ns(), false});
    } else if (cat == std::string_view(keys::kCatCompute)) {
      if (!is_unit) {
        ++s.without_payload;
        continue;
      }
      e.unit = int32_t(t.payload);
      join.compute.push_back(ref);
    } else if (cat == std::string_view(keys::kCatComm)) {
      // The trainer's view of a collective; its NCCL kernel is the device's communication.
      e.coll = model::collective_from_op_name(name);
      if (is_unit) e.unit = int32_t(t.payload);
      else
        ++s.without_payload;
      join.comm.push_back(ref);
    }
  }
  // Nsight names a thread by its OS id: the tracks holding the trainer's ranges are its own threads, the
  // others with CUDA calls are helpers (libtorch's autograd device thread) that gpu_join also looks at.
  for (auto [thread, track] : in.threads) {
    join.api_tracks.emplace_back(thread, track);
    if (trainer_tracks.count(track)) join.os_tids.emplace_back(r.tracks[track].tid, thread);
  }
  const plugins::gpu_join::Stats j = plugins::gpu_join::join(r, join);
  s.joined = j.by_external_id + j.by_thread;
  s.unit_ranges = j.unit_ranges;
  std::sort(steps.begin(), steps.end(),
            [](const model::Step& a, const model::Step& b) { return a.start_ns < b.start_ns; });
  s.steps = steps.size();
  if (!steps.empty()) {
    model::set_steps(r, std::move(steps), true);
    r.step_rule = model::StepRule::TrainerStep;
  }
  in = TrainerInput{};
  return s;
}

}  // namespace shardscope::nsys
