#include "analyzer/cli/memory.h"
#include "analyzer/cli/output.h"

#include <algorithm>
#include <ostream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analyzer/metrics/memory_model.h"
#include "analyzer/report/memory_render.h"
#include "analyzer/report/report_keys.h"
#include "analyzer/report/table.h"
#include "sizing/presets.h"
#include "sizing/zero_model.h"
#include "tracer/format/keys.h"

namespace shardscope::cli {

namespace {
std::string strategy(int stage, bool hybrid) {
  switch (stage) {
    case 0: return "DDP / NO_SHARD";
    case 1: return hybrid ? "ZeRO-1 in a node" : "ZeRO-1";
    case 2: return hybrid ? "_HYBRID_SHARD_ZERO2" : "SHARD_GRAD_OP";
    default: return hybrid ? "HYBRID_SHARD" : "FULL_SHARD";
  }
}
// GB (1e9 bytes, one decimal) for large models, MB (1e6, three decimals) when every figure is below a GB.
struct Unit {
  bool mb = false;
  std::string name() const { return mb ? "MB" : "GB"; }
  std::string operator()(double b) const {
    return mb ? fmt::format("{:.3f}", b / 1e6) : fmt::format("{:.1f}", b / 1e9);
  }
};

struct Line {
  int stage;
  sizing::MemoryPrediction p;
  bool gathered_known;
};

// The model's inputs and its predictions, stage by stage, as text and JSON render them.
struct Calculation {
  sizing::MemoryConfig c;
  std::vector<int64_t> units;  // a preset's units, unpadded; units[0] is the root
  bool hybrid = false;
  int group = 0;
  std::vector<Line> lines;
  bool gathered_unknown = false;
  nlohmann::json j;
};

// The flags into the model's inputs; a line on `err` and false when one is wrong. A preset it cannot read
// throws, which memory() says as the error.
bool read_args(const MemoryArgs& a, Calculation& k, std::ostream& err) {
  sizing::MemoryConfig& c = k.c;
  // A preset's units, unpadded: each stage pads them to its own shard count, as the trainer does.
  if (!a.preset.empty()) {
    sizing::ModelConfig m = sizing::preset(a.preset);
    c.params = double(sizing::parameter_count(m));
    for (const sizing::UnitLayout& u : sizing::unit_layouts(m)) k.units.push_back(u.numel);
  }
  if (a.params) c.params = *a.params;
  if (c.params <= 0) {
    err << "shardscope: error: give --preset NAME or --params N (a positive parameter count)\n";
    return false;
  }
  if (a.world < 1) {
    err << "shardscope: error: --world must be at least 1\n";
    return false;
  }
  if (a.hybrid_shard > 0 && (a.hybrid_shard > a.world || a.world % a.hybrid_shard != 0)) {
    err << fmt::format("shardscope: error: --hybrid-shard {} does not divide --world {} into nodes\n", a.hybrid_shard,
                       a.world);
    return false;
  }
  if (!sizing::apply_dtype(c, a.dtype)) {
    print_error(err, "unknown --dtype " + a.dtype + " (bf16, fp16, fp32)");
    return false;
  }
  if (a.precision != "zero" && a.precision != "fsdp") {
    print_error(err, "unknown --precision " + a.precision + " (zero, fsdp)");
    return false;
  }
  if ((a.largest_unit && *a.largest_unit < 0) || (a.root_unit && *a.root_unit < 0)) {
    err << "shardscope: error: --largest-unit and --root-unit are parameter counts (0 or more)\n";
    return false;
  }
  c.precision = a.precision == "fsdp" ? sizing::Precision::Fsdp : sizing::Precision::Zero;
  k.hybrid = a.hybrid_shard > 0;
  k.group = k.hybrid ? a.hybrid_shard : a.world;
  c.offload = a.offload;
  c.units_in_flight = sizing::units_in_flight(a.backward_prefetch != "none", false);
  return true;
}

nlohmann::json inputs_json(const MemoryArgs& a, const Calculation& k) {
  namespace rk = report::report_keys;
  nlohmann::json j;
  j[rk::kSchema] = rk::kMemorySchemaValue;
  j[rk::kParams] = k.c.params;
  j[rk::kWorld] = a.world;
  j[rk::kShardingGroup] = k.group;
  j[rk::kRanksPerNode] = k.hybrid ? nlohmann::json(a.hybrid_shard) : nlohmann::json(nullptr);
  j[rk::kDtype] = a.dtype;
  j[rk::kPrecision] = a.precision;
  j[rk::kUnitsInFlight] = k.c.units_in_flight;
  j[rk::kOffload] = k.c.offload;
  j[rk::kStages] = nlohmann::json::array();
  return j;
}

// Stage `s`'s prediction, added to the lines and the JSON.
void predict_stage(const MemoryArgs& a, Calculation& k, int s) {
  namespace rk = report::report_keys;
  sizing::MemoryConfig& c = k.c;
  c.stage = s;
  c.world = s == 0 ? 1 : k.group;  // stage 0 shards nothing
  // Units padded to a multiple of the stage's shard count, as FSDP and the trainer flatten them.
  const int64_t shard = s == 0 ? 1 : k.group;
  c.padded_params = 0;
  c.largest_unit_params = a.largest_unit.value_or(0);
  c.root_unit_params = a.root_unit.value_or(0);
  if (!k.units.empty()) {
    for (size_t u = 0; u < k.units.size(); ++u) {
      const double padded = double(sizing::padded_numel(k.units[u], shard));
      c.padded_params += padded;
      if (u == size_t(keys::kRootUnit) && k.units.size() > 1) {
        if (!a.root_unit) c.root_unit_params = padded;
      } else if (!a.largest_unit) {
        c.largest_unit_params = std::max(c.largest_unit_params, padded);
      }
    }
    if (a.params) c.padded_params = 0;  // an explicit Ψ wins
  }
  sizing::MemoryPrediction p = sizing::predict(c);
  const bool gathered_known = s == 3 && (c.largest_unit_params > 0 || c.root_unit_params > 0);
  k.gathered_unknown = k.gathered_unknown || (s == 3 && !gathered_known);
  k.j[rk::kStages].push_back(
      {{rk::kStage, s},
       {rk::kStrategy, strategy(s, k.hybrid)},
       {rk::kModelStatesBytes, p.model_states()},
       {rk::kMasterBytes, p.master},
       {rk::kParamsBytes, p.params + p.params_shard},
       {rk::kGatheredBytes, gathered_known ? nlohmann::json(p.gathered) : nlohmann::json(nullptr)},
       {rk::kShardedParamsBytes, p.sharded_params()},
       {rk::kUnshardedParamsBytes, p.unsharded_params()},
       {rk::kGradientsBytes, p.gradients},
       {rk::kOptimizerStateBytes, p.optimizer_state},
       {rk::kHostOffloadedBytes, p.host_offloaded},
       {rk::kMemoryCommand, report::memory_command(c)}});
  if (a.stage) k.j[rk::kModelStatesBytes] = p.model_states();
  k.lines.push_back({s, p, gathered_known});
}

// The table's notes: what each column counts, under the options given.
void write_notes(const Calculation& k, const Unit& gb, std::ostream& o) {
  const sizing::MemoryConfig& c = k.c;
  const bool mixed = c.param_bytes != 4;
  o << "  (" << (gb.mb ? "MB = 1e6 bytes" : "GB = 1e9 bytes")
    << ". fp32 master: the optimizer's fp32 copy of the parameters, sharded from stage 1 on (in fp32 DDP it is the\n"
       "   parameters themselves); params: the parameters kept in their dtype beside it";
  if (mixed && c.precision == sizing::Precision::Zero) o << " (under stage 3, a shard of them)";
  o << "; optimizer: the two moments.\n";
  o << fmt::format(
      "   + gathered: under stage 3, the units gathered while they run: the largest unit × {} ({}), and the root "
      "unit, kept gathered;\n"
      "   not part of the model states.",
      c.units_in_flight,
      c.units_in_flight >= 2 ? "the running one and the prefetched one" : "no prefetch: the running one");
  if (k.gathered_unknown) o << " n/a: no unit sizes (give --preset, or --largest-unit and --root-unit).";
  o << "\n";
  if (mixed)
    o << (c.precision == sizing::Precision::Zero
              ? "   --precision fsdp counts as PyTorch FSDP and shardscope-train keep them: fp32 gradients, no shard "
                "in the parameters' dtype.\n"
              : "   --precision zero counts as the ZeRO paper does: gradients in the parameters' dtype, and a shard "
                "of the parameters in it under stage 3.\n");
  if (c.offload)
    o << "   --offload moves the sharded state (master, gradients, moments) to the host under stages 2 and 3; below "
         "stage 2 it changes nothing.\n";
  o << "   Activations come on top.)\n";
}

std::string render_text(const MemoryArgs& a, const Calculation& k) {
  const sizing::MemoryConfig& c = k.c;
  std::ostringstream o;
  Unit gb;
  double largest = 0;
  for (const Line& l : k.lines) largest = std::max({largest, l.p.model_states() + l.p.host_offloaded, l.p.gathered});
  gb.mb = largest < 1e9;
  const std::string u = " " + gb.name();
  report::Table t{{"stage", "strategy", "fp32 master" + u, "params" + u, "grads" + u, "optimizer" + u,
                   "model states" + u, "+ gathered" + u, "on host" + u},
                  {},
                  2};
  for (const Line& l : k.lines) {
    const sizing::MemoryPrediction& p = l.p;
    t.rows.push_back({std::to_string(l.stage), strategy(l.stage, k.hybrid), gb(p.master), gb(p.params + p.params_shard),
                      gb(p.gradients), gb(p.optimizer_state), gb(p.model_states()),
                      l.stage != 3       ? "-"
                      : l.gathered_known ? gb(p.gathered)
                                         : "n/a",
                      gb(p.host_offloaded)});
  }
  const bool mixed = c.param_bytes != 4;
  o << fmt::format(
      "ZeRO model states per rank: {:.4g} parameters{}, {} ranks{}, {} parameters, {} accounting (--precision {}): "
      "fp32 master, "
      "{:g}-byte parameters, {:g}-byte gradients, AdamW's two fp32 moments{}\n",
      c.params, a.preset.empty() ? "" : " (preset " + a.preset + ")", a.world,
      k.hybrid ? fmt::format(" (HYBRID_SHARD: sharded within nodes of {}, replicated across {} nodes)", a.hybrid_shard,
                             a.world / a.hybrid_shard)
               : " in the sharding group",
      a.dtype, c.precision == sizing::Precision::Fsdp ? "PyTorch FSDP's and shardscope-train's" : "the ZeRO paper's",
      a.precision, c.param_bytes, c.grad_bytes(), mixed ? " (K = 4 + 8 = 12 bytes)" : "");
  o << t.render(false, "  ");
  write_notes(k, gb, o);
  return o.str();
}

// The calculator; a preset it cannot read throws, which memory() says as the error.
int calculate(const MemoryArgs& a, std::ostream& out, std::ostream& err) {
  Calculation k;
  if (!read_args(a, k, err)) return 2;
  k.j = inputs_json(a, k);
  for (int s : a.stage ? std::vector<int>{*a.stage} : std::vector<int>{0, 1, 2, 3}) predict_stage(a, k, s);
  const auto text = [&](bool) { return render_text(a, k); };
  return write_result(a.format, {.text = text, .json = [&] { return k.j; }}, "-", out, err) ? 0 : 2;
}

}  // namespace

int memory(const MemoryArgs& a, std::ostream& out, std::ostream& err) {
  return guarded(err, [&] { return calculate(a, out, err); });
}

}  // namespace shardscope::cli
