#include "analyzer/metrics/memory_inference.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <vector>

#include "model/classify.h"
#include "model/saturating.h"
#include "tracer/format/keys.h"

namespace shardscope::metrics {

using model::CollectiveKind;
using model::Event;

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

struct Ref {
  const Event* e;
  EventRef at;
};

// The rank's collectives of one kind: the device's where it has any (a kernel and the host op that launched
// it describe one collective), else the host's.
std::vector<Ref> collectives(const model::Rank& rank, CollectiveKind kind) {
  std::vector<Ref> device, host;
  for (size_t t = 0; t < rank.tracks.size(); ++t)
    for (size_t i = 0; i < rank.tracks[t].events.size(); ++i) {
      const Event& e = rank.tracks[t].events[i];
      if (e.coll != kind || e.ph != 'X') continue;
      (e.is_device() ? device : host).push_back({&e, {int32_t(t), int32_t(i)}});
    }
  return device.empty() ? host : device;
}

// The step (index into rank.steps) of an event: the importer's, else, for a host event, the step whose host
// range holds its start (a host-only collective, Gloo's); -1 for none. A device event the importer left out
// of every step stays out.
int step_of(const model::Rank& rank, const Event& e) {
  if (e.step >= 0 || e.is_device()) return e.step;
  for (size_t i = 0; i < rank.steps.size(); ++i) {
    const model::Step& s = rank.steps[i];
    if (e.ts_ns >= s.host_start_ns && e.ts_ns < s.host_end_ns) return int(i);
  }
  return -1;
}

// The step (index into rank.steps) holding the most of `refs`, a completed one; -1 when none is in a step.
int step_with_most(const model::Rank& rank, const std::vector<Ref>& refs) {
  std::map<int, size_t> count;
  for (const Ref& r : refs)
    if (const int s = step_of(rank, *r.e); s >= 0 && size_t(s) < rank.steps.size() && !rank.steps[size_t(s)].aborted)
      ++count[s];
  int best = -1;
  size_t most = 0;
  for (auto [step, n] : count)
    if (n > most) best = step, most = n;
  return best;
}

// The dtype the ops of `kind` name (keys.h kMetaCollectiveDtypes): fp32/bf16/fp16, or why not.
MemoryInput dtype_of(const model::Rank& rank, CollectiveKind kind) {
  MemoryInput in;
  const nlohmann::json* counts = nullptr;
  if (rank.metadata.is_object())
    if (auto it = rank.metadata.find(keys::kMetaCollectiveDtypes); it != rank.metadata.end() && it->is_object())
      if (auto k = it->find(std::string(model::to_string(kind))); k != it->end() && k->is_object()) counts = &*k;
  if (!counts || counts->empty()) {
    in.na = InferNa::NoDtype;
    return in;
  }
  std::string names;
  for (const auto& [name, n] : counts->items()) {
    names += (names.empty() ? "" : ", ") + name;
    if (n.is_number_integer()) in.events += n.get<int64_t>();
  }
  if (counts->size() > 1) {
    in.na = InferNa::MixedDtypes, in.text = names;
    return in;
  }
  in.text = canonical_dtype(counts->begin().key());
  if (in.text.empty()) {
    in.na = InferNa::UnknownDtype, in.text = names;
    return in;
  }
  in.origin = InputOrigin::Inferred, in.basis = InputBasis::CollectiveDtype;
  return in;
}

int dtype_bytes(const std::string& canonical) { return canonical == "fp32" ? 4 : canonical.empty() ? 0 : 2; }

MemoryInput world_size_of(const model::Rank& rank) {
  MemoryInput in;
  if (rank.world_size > 0) {
    in.origin = InputOrigin::Inferred, in.basis = InputBasis::TraceHeader, in.value = rank.world_size;
    return in;
  }
  int largest = 0;
  for (const model::Track& t : rank.tracks)
    for (const Event& e : t.events)
      if (e.coll != CollectiveKind::None && e.group_size > largest) largest = e.group_size, ++in.events;
  if (largest > 0) in.origin = InputOrigin::Inferred, in.basis = InputBasis::GroupSize, in.value = largest;
  else
    in.na = InferNa::NoWorldSize;
  return in;
}

MemoryInput optimizer_of(const model::Rank& rank) {
  MemoryInput in;
  constexpr std::string_view prefix = "Optimizer.step#";
  for (size_t t = 0; t < rank.tracks.size(); ++t)
    for (size_t i = 0; i < rank.tracks[t].events.size(); ++i) {
      const Event& e = rank.tracks[t].events[i];
      const std::string_view name = rank.str(e.name);
      if (e.is_device() || !name.starts_with(prefix)) continue;
      std::string_view opt = name.substr(prefix.size());
      opt = opt.substr(0, opt.find('.'));  // "AdamW.step"
      if (opt.empty()) continue;
      if (in.events++ == 0) in.text = std::string(opt), in.at = {int32_t(t), int32_t(i)};
    }
  if (in.events > 0) in.origin = InputOrigin::Inferred, in.basis = InputBasis::OptimizerRange;
  else
    in.na = InferNa::NoOptimizerRange;
  return in;
}

// FSDP: the strategy from how often each unit is gathered in one step, the parameters from the gathers'
// outputs (each unit's largest once), and the units the model's stage-3 term needs.
void from_all_gathers(const model::Rank& rank, const std::vector<Ref>& ags, bool any_all_reduce, MemoryInputs& in) {
  const int si = step_with_most(rank, ags);
  if (si < 0) {
    in.sharding.na = in.params.na = InferNa::NoSteps;
    return;
  }
  std::map<int32_t, std::pair<int, int64_t>> units;  // unit -> (gathers, largest output bytes)
  size_t n = 0;
  bool sizes = true;
  const Ref* first = nullptr;
  int group = 0;
  for (const Ref& r : ags) {
    if (step_of(rank, *r.e) != si) continue;
    if (r.e->unit < 0) {
      in.sharding.na = in.params.na = InferNa::NoUnits;
      return;
    }
    if (!first) first = &r;
    ++n;
    auto& [count, bytes] = units[r.e->unit];
    ++count;
    if (r.e->bytes == model::kUnknown) sizes = false;
    else
      bytes = std::max(bytes, r.e->bytes);
    group = std::max(group, r.e->group_size);
  }
  int most = 0;
  for (const auto& [u, cb] : units) most = std::max(most, cb.first);
  const bool twice = most >= 2;
  const int64_t step_number = rank.steps[size_t(si)].number;
  MemoryInput& s = in.sharding;
  s.origin = InputOrigin::Inferred, s.events = int64_t(n), s.step = step_number, s.at = first->at;
  s.value = twice ? 3 : 2;
  const int world = in.world_size.known() ? int(in.world_size.value) : 0;
  if (group > 0 && world > group && any_all_reduce) {
    s.basis = InputBasis::TwoGroupSizes, s.text = twice ? "HYBRID_SHARD" : "_HYBRID_SHARD_ZERO2";
    in.group_size = group;
  } else {
    s.basis = twice ? InputBasis::GatheredTwice : InputBasis::GatheredOnce;
    s.text = twice ? "FULL_SHARD" : "SHARD_GRAD_OP";
  }
  MemoryInput& p = in.params;
  const int size = dtype_bytes(in.dtype.text);
  if (!sizes) p.na = InferNa::NoMessageSizes;
  else if (!in.dtype.known())
    p.na = in.dtype.na;
  if (p.na != InferNa::None) return;
  p.origin = InputOrigin::Inferred, p.basis = InputBasis::GatherOutputs;
  p.events = int64_t(n), p.step = step_number, p.at = first->at;
  in.units = int64_t(units.size());
  for (const auto& [u, cb] : units) {
    const double params = double(cb.second / size);
    p.value += params;
    in.largest_unit = std::max(in.largest_unit, params);
    // FSDP1's root: gathered in forward and kept through backward while the others are gathered again.
    if (twice && cb.first == 1) in.root_unit = std::max(in.root_unit, params);
  }
}

// DDP: each gradient is all-reduced once a step.
void from_all_reduces(const model::Rank& rank, const std::vector<Ref>& ars, MemoryInputs& in) {
  MemoryInput& s = in.sharding;
  s.origin = InputOrigin::Inferred, s.basis = InputBasis::AllReduceOnly, s.text = "NO_SHARD", s.value = 0;
  s.events = int64_t(ars.size()), s.at = ars.front().at;
  const int si = step_with_most(rank, ars);
  MemoryInput& p = in.params;
  // No size anywhere is the reason that holds whatever the steps.
  if (std::none_of(ars.begin(), ars.end(), [](const Ref& r) { return r.e->bytes >= 0; })) {
    p.na = InferNa::NoMessageSizes;
    return;
  }
  if (si < 0) {
    p.na = InferNa::NoSteps;
    return;
  }
  int64_t bytes = 0;
  const Ref* first = nullptr;
  for (const Ref& r : ars) {
    if (step_of(rank, *r.e) != si) continue;
    if (r.e->bytes == model::kUnknown || r.e->bytes < 0) {
      p.na = InferNa::NoMessageSizes;
      return;
    }
    if (!first) first = &r;
    ++p.events;
    bytes = model::sat_add(bytes, r.e->bytes);  // sizes come from the file
  }
  if (!in.dtype.known()) {
    p.na = in.dtype.na, p.events = 0;
    return;
  }
  p.origin = InputOrigin::Inferred, p.basis = InputBasis::AllReduceElements;
  p.value = double(bytes / dtype_bytes(in.dtype.text)), p.step = rank.steps[size_t(si)].number, p.at = first->at;
}

}  // namespace

bool MemoryInputs::inferred_or_given() const {
  for (const MemoryInput* i : {&world_size, &sharding, &params, &dtype, &optimizer})
    if (i->origin == InputOrigin::Given) return true;
  return sharding.origin == InputOrigin::Inferred;
}

std::optional<int> stage_of_sharding(const std::string& name) {
  const std::string s = lower(name);
  if (s == "full_shard" || s == "zero3" || s == "hybrid_shard") return 3;
  if (s == "shard_grad_op" || s == "zero2" || s == "_hybrid_shard_zero2") return 2;
  if (s == "zero1") return 1;
  if (s == "no_shard" || s == "ddp" || s == "zero0") return 0;
  return std::nullopt;
}

std::string canonical_sharding(const std::string& name) {
  const std::string s = lower(name);
  if (s == "full_shard" || s == "zero3") return "FULL_SHARD";
  if (s == "shard_grad_op" || s == "zero2") return "SHARD_GRAD_OP";
  if (s == "zero1") return "ZERO1";
  if (s == "no_shard" || s == "ddp" || s == "zero0") return "NO_SHARD";
  if (s == "hybrid_shard") return "HYBRID_SHARD";
  if (s == "_hybrid_shard_zero2") return "_HYBRID_SHARD_ZERO2";
  return "";
}

bool is_hybrid(const std::string& sharding) { return lower(sharding).find("hybrid") != std::string::npos; }

std::string canonical_dtype(const std::string& name) {
  const std::string s = lower(name);
  if (s == "float" || s == "float32" || s == "fp32") return "fp32";
  if (s == "bfloat16" || s == "bf16") return "bf16";
  if (s == "half" || s == "float16" || s == "fp16") return "fp16";
  return "";
}

MemoryInputs infer_memory_inputs(const model::Rank& rank) {
  MemoryInputs in;
  in.world_size = world_size_of(rank);
  in.optimizer = optimizer_of(rank);
  const std::vector<Ref> ags = collectives(rank, CollectiveKind::AllGather),
                         ars = collectives(rank, CollectiveKind::AllReduce);
  // The parameters' dtype is what FSDP gathers them in; DDP reduces gradients in the parameters' dtype.
  const std::vector<Ref>& typed = ags.empty() ? ars : ags;
  in.dtype = dtype_of(rank, ags.empty() ? CollectiveKind::AllReduce : CollectiveKind::AllGather);
  if (in.dtype.known() && !typed.empty()) in.dtype.at = typed.front().at;
  if (!ags.empty()) from_all_gathers(rank, ags, !ars.empty(), in);
  else if (!ars.empty())
    from_all_reduces(rank, ars, in);
  else
    in.sharding.na = in.params.na = InferNa::NoCollectives;
  return in;
}

MemoryInputs inputs_from_config(const sizing::MemoryConfig& c) {
  MemoryInputs in;
  for (MemoryInput* i : {&in.world_size, &in.sharding, &in.params, &in.dtype, &in.optimizer})
    i->origin = InputOrigin::RunConfig;
  in.world_size.value = c.world;
  in.sharding.value = c.stage;
  in.sharding.text = c.stage == 3 ? "FULL_SHARD" : c.stage == 2 ? "SHARD_GRAD_OP" : c.stage == 1 ? "ZERO1" : "NO_SHARD";
  in.params.value = c.padded_params > 0 ? c.padded_params : c.params;
  in.dtype.text = c.param_bytes == 4 ? "fp32" : "bf16";
  in.optimizer.text = "AdamW";
  in.largest_unit = c.largest_unit_params, in.root_unit = c.root_unit_params;
  return in;
}

void apply_given(MemoryInputs& in, const MemoryGiven& g) {
  auto given = [](MemoryInput& i) { i = MemoryInput{}, i.origin = InputOrigin::Given; };
  if (g.world_size) given(in.world_size), in.world_size.value = *g.world_size;
  if (g.params) given(in.params), in.params.value = *g.params;
  if (g.dtype) given(in.dtype), in.dtype.text = canonical_dtype(*g.dtype);
  if (g.optimizer) given(in.optimizer), in.optimizer.text = *g.optimizer;
  if (g.sharding) {
    given(in.sharding);
    in.sharding.text = canonical_sharding(*g.sharding);
    in.sharding.value = stage_of_sharding(*g.sharding).value_or(3);
    // A hybrid strategy given for a trace whose gathers showed no smaller group shards over the world.
    if (!is_hybrid(in.sharding.text)) in.group_size = 0;
  }
}

std::optional<sizing::MemoryConfig> config_from_inputs(const MemoryInputs& in, sizing::MemoryNa& why_not) {
  using Code = sizing::MemoryNa::Code;
  const std::pair<const MemoryInput*, const char*> needed[] = {
      {&in.world_size, "world_size"}, {&in.sharding, "sharding"}, {&in.params, "params"}, {&in.dtype, "dtype"}};
  for (const auto& [input, name] : needed)
    if (!input->known()) {
      why_not = {Code::NoInferredInput, name};
      return std::nullopt;
    }
  sizing::MemoryConfig c;
  c.params = in.params.value;
  c.world = is_hybrid(in.sharding.text) && in.group_size > 0 ? in.group_size : std::max(1, int(in.world_size.value));
  c.stage = int(in.sharding.value);
  if (!sizing::apply_dtype(c, in.dtype.text)) sizing::apply_dtype(c, "fp32");
  c.precision = sizing::Precision::Fsdp;  // PyTorch FSDP's: fp32 master and gradients under bf16 parameters
  if (c.stage == 3) c.largest_unit_params = in.largest_unit, c.root_unit_params = in.root_unit;
  c.units_in_flight = sizing::units_in_flight(true, false);  // FSDP1's BACKWARD_PRE default, FSDP2's prefetch
  why_not = {};
  return c;
}

}  // namespace shardscope::metrics
