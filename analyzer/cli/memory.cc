#include "analyzer/cli/memory.h"
#include "analyzer/cli/output.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <ostream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analyzer/metrics/memory_model.h"
#include "analyzer/report/memory_render.h"
#include "analyzer/report/report_keys.h"
#include "analyzer/report/table.h"
#include "sizing/activations.h"
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

// One figure in the unit that fits it: GB for a GB or more, MB below.
std::string size_text(double b) {
  return std::fabs(b) >= 1e9 ? fmt::format("{:.1f} GB", b / 1e9) : fmt::format("{:.3f} MB", b / 1e6);
}

// The devices --device names, at their vendors' data-sheet capacity in GB = 1e9 bytes. The cards hold that
// figure in GiB (an H100 80 GB has 80 GiB = 85.9e9 bytes); the CUDA context, NCCL's buffers and the caching
// allocator's slack take part of the difference, so the decimal figure is the one a plan can count on.
struct Device {
  const char* name;
  double bytes;
  const char* data_sheet;
};
constexpr Device kDevices[] = {
    {"H100", 80e9, "NVIDIA H100 Tensor Core GPU data sheet: H100 SXM, 80 GB HBM3"},
    {"H200", 141e9, "NVIDIA H200 Tensor Core GPU data sheet: 141 GB HBM3e"},
    // The B200 package carries 192 GB of HBM3e; NVIDIA's DGX B200 and HGX B200 data sheets list 1,440 GB
    // over 8 GPUs, 180 GB each, the capacity a program gets.
    {"B200", 180e9, "NVIDIA DGX B200 data sheet: 1,440 GB over 8 GPUs, 180 GB each"},
    {"MI300X", 192e9, "AMD Instinct MI300X data sheet: 192 GB HBM3"},
};

struct DeviceChoice {
  std::string name;  // empty: a byte count
  double bytes = 0;
  std::string data_sheet;
  std::string label() const {  // "an H100 (80.0 GB)", "a device of 85.9 GB"
    if (name.empty()) return "a device of " + size_text(bytes);
    const bool an = name[0] == 'H' || name[0] == 'M';  // "an aitch", "an em"
    return fmt::format("{} {} ({})", an ? "an" : "a", name, size_text(bytes));
  }
};

// --device: a name above (any case), or a whole byte count; false with one line on `err`.
bool read_device(const std::string& given, DeviceChoice& d, std::ostream& err) {
  for (const Device& dev : kDevices) {
    std::string upper = given;
    for (char& ch : upper) ch = char(std::toupper(static_cast<unsigned char>(ch)));
    if (upper == dev.name) {
      d = {dev.name, dev.bytes, dev.data_sheet};
      return true;
    }
  }
  char* end = nullptr;
  const double v = std::strtod(given.c_str(), &end);
  const bool digits = !given.empty() && std::all_of(given.begin(), given.end(), [](char ch) {
    return std::isdigit(static_cast<unsigned char>(ch)) || ch == 'e' || ch == 'E' || ch == '.' || ch == '+';
  });
  if (!digits || end == given.c_str() || *end || !std::isfinite(v) || v < 1 || v > 1e18 || v != std::floor(v)) {
    print_error(err, "--device '" + given.substr(0, 40) +
                         "' is not H100, H200, B200, MI300X or a whole number of bytes (e.g. 85899345920)");
    return false;
  }
  d = {"", v, "as given"};
  return true;
}

struct Line {
  int stage;
  sizing::MemoryPrediction p;
  bool gathered_known;
  // On the device: the model states, the gathered units (stage 3, when known) and the activations.
  double total() const { return p.model_states() + (stage == 3 && gathered_known ? p.gathered : 0); }
};

// The model's inputs and its predictions, stage by stage, as text and JSON render them.
struct Calculation {
  sizing::MemoryConfig c;
  std::vector<int64_t> units;  // a preset's units, unpadded; units[0] is the root
  bool hybrid = false;
  int group = 0;
  std::vector<Line> lines;
  bool gathered_unknown = false;
  DeviceChoice device;
  std::optional<sizing::ActivationPrediction> activations;  // nullopt: no shape given
  bool micro_batch_default = false;                         // the micro-batch is the default 1
  nlohmann::json j;
  double total(const Line& l) const { return l.total() + (activations ? activations->bytes : 0); }
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

// The activation formula's inputs: a preset's shape, then the flags; none given leaves the activations
// out (said in the verdict), some given is an error naming the rest.
bool read_activations(const MemoryArgs& a, Calculation& k, std::ostream& err) {
  std::optional<double> s = a.seq_len, h = a.hidden, L = a.layers, heads = a.heads;
  if (!a.preset.empty()) {
    const sizing::ModelConfig m = sizing::preset(a.preset);
    s = s.value_or(double(m.seq_len)), h = h.value_or(double(m.dim)), L = L.value_or(double(m.layers));
    heads = heads.value_or(double(m.heads));
  }
  std::vector<std::string> missing;
  for (auto [v, flag] : {std::pair{s, "--seq-len"}, {h, "--hidden"}, {L, "--layers"}, {heads, "--heads"}})
    if (!v) missing.push_back(flag);
  if (missing.size() == 4 && !a.micro_batch) {
    if (a.checkpointing || a.attention != "eager") {
      print_error(err,
                  "--checkpointing and --attention need the activations' shape: --seq-len, --hidden, --layers "
                  "and --heads, or --preset");
      return false;
    }
    return true;  // no activations asked for
  }
  if (!missing.empty()) {
    print_error(err, fmt::format("the activations need {} too (or --preset)", fmt::join(missing, ", ")));
    return false;
  }
  if (a.attention != "eager" && a.attention != "fused") {
    print_error(err, "unknown --attention " + a.attention + " (eager, fused)");
    return false;
  }
  sizing::ActivationConfig c;
  c.seq_len = *s, c.hidden = *h, c.layers = *L, c.heads = *heads;
  c.batch = a.micro_batch.value_or(1);
  k.micro_batch_default = !a.micro_batch;
  for (double v : {c.seq_len, c.hidden, c.layers, c.heads, c.batch})
    if (!std::isfinite(v) || v < 1) {
      print_error(err, "--seq-len, --micro-batch, --hidden, --layers and --heads are whole numbers of 1 or more");
      return false;
    }
  c.bytes_per_element = k.c.param_bytes;  // the blocks compute in the parameters' dtype
  c.checkpointing = a.checkpointing;
  c.scores_kept = a.attention == "eager";
  k.activations = sizing::predict_activations(c);
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
  j[rk::kDevice] = {{rk::kName, k.device.name.empty() ? nlohmann::json(nullptr) : nlohmann::json(k.device.name)},
                    {rk::kBytes, k.device.bytes},
                    {rk::kDataSheet, k.device.data_sheet}};
  j[rk::kActivationsBytes] = k.activations ? nlohmann::json(k.activations->bytes) : nlohmann::json(nullptr);
  if (k.activations) {
    const sizing::ActivationConfig& c = k.activations->inputs;
    j[rk::kActivationsInputs] = {{"seq_len", c.seq_len},
                                 {"micro_batch", c.batch},
                                 {"hidden", c.hidden},
                                 {"layers", c.layers},
                                 {"heads", c.heads},
                                 {"bytes_per_element", c.bytes_per_element},
                                 {"checkpointing", c.checkpointing},
                                 {"attention_scores_kept", c.scores_kept}};
  } else {
    j[rk::kActivationsInputs] = nullptr;
  }
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
  const Line line{s, p, gathered_known};
  const double total = k.total(line);
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
       {rk::kActivationsBytes, k.activations ? nlohmann::json(k.activations->bytes) : nlohmann::json(nullptr)},
       {rk::kTotalBytes, total},
       {rk::kHeadroomBytes, k.device.bytes - total},
       {rk::kFits, total <= k.device.bytes},
       {rk::kMemoryCommand, report::memory_command(c)}});
  if (a.stage) k.j[rk::kModelStatesBytes] = p.model_states();
  k.lines.push_back(line);
}

// The first line: whether each strategy fits the device, with its headroom or what it is over by, and what
// the totals leave out.
std::string verdict(const Calculation& k) {
  std::vector<std::string> fit, over;
  for (const Line& l : k.lines) {
    const double total = k.total(l), room = k.device.bytes - total;
    (room >= 0 ? fit : over)
        .push_back(fmt::format("{} ({} a GPU, {} {})", strategy(l.stage, k.hybrid), size_text(total),
                               size_text(std::fabs(room)), room >= 0 ? "headroom" : "over"));
  }
  const std::string device = k.device.label();
  std::string o;
  if (over.empty())
    o = fmt::format("Fits {} with {}{}", device, k.lines.size() > 1 ? "every strategy: " : "", fmt::join(fit, ", "));
  else if (fit.empty())
    o = fmt::format("Does not fit {} with {}{}", device, k.lines.size() > 1 ? "any strategy: " : "",
                    fmt::join(over, ", "));
  else
    o = fmt::format("Fits {} with {}; does not fit with {}", device, fmt::join(fit, ", "), fmt::join(over, ", "));
  std::vector<std::string> left_out;
  if (!k.activations)
    left_out.push_back(
        "activations not counted (give --seq-len, --micro-batch, --hidden, --layers and --heads, or --preset)");
  if (k.gathered_unknown) left_out.push_back("stage 3's gathered units not counted (no unit sizes)");
  if (!left_out.empty()) o += fmt::format("; {}", fmt::join(left_out, "; "));
  return o + "\n";
}

// What the activation figure assumes, in one line of the notes.
std::string activation_note(const Calculation& k) {
  if (!k.activations) return "   Activations not counted: no shape given.\n";
  const sizing::ActivationConfig& c = k.activations->inputs;
  return fmt::format(
      "   activations: Korthikanti et al. 2022, s·b·h·(34 + 5·a·s/h) bytes a layer at 2 bytes an element; s={:g} "
      "b={:g}{} h={:g} a={:g} L={:g}; {}; {}; {:g}-byte activations (the parameters' dtype); dropout counted "
      "(the formula's masks).\n",
      c.seq_len, c.batch, k.micro_batch_default ? " (--micro-batch, default 1)" : "", c.hidden, c.heads, c.layers,
      c.scores_kept ? "attention scores kept (eager attention: the 5·a·s/h term)"
                    : "fused attention (--attention fused: SDPA flash or memory-efficient, FlashAttention) keeps no s² "
                      "scores: the 5·a·s/h term left out",
      c.checkpointing ? "full checkpointing: each layer's input (2·s·b·h) and one layer recomputed"
                      : "no checkpointing: every layer's activations kept",
      c.bytes_per_element);
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
  o << activation_note(k);
  o << "   total: model states + gathered + activations on each GPU; headroom: the device's capacity ("
    << (k.device.name.empty() ? "as given" : k.device.data_sheet) << ") − total, negative when over.)\n";
}

std::string render_text(const MemoryArgs& a, const Calculation& k) {
  const sizing::MemoryConfig& c = k.c;
  std::ostringstream o;
  Unit gb;
  double largest = 0;
  for (const Line& l : k.lines) largest = std::max({largest, l.p.model_states() + l.p.host_offloaded, k.total(l)});
  gb.mb = largest < 1e9;
  const std::string u = " " + gb.name();
  report::Table t{
      {"stage", "strategy", "fp32 master" + u, "params" + u, "grads" + u, "optimizer" + u, "model states" + u,
       "+ gathered" + u, "+ activations" + u, "= total" + u, "headroom" + u, "on host" + u},
      {},
      2};
  for (const Line& l : k.lines) {
    const sizing::MemoryPrediction& p = l.p;
    t.rows.push_back({std::to_string(l.stage), strategy(l.stage, k.hybrid), gb(p.master), gb(p.params + p.params_shard),
                      gb(p.gradients), gb(p.optimizer_state), gb(p.model_states()),
                      l.stage != 3       ? "-"
                      : l.gathered_known ? gb(p.gathered)
                                         : "n/a",
                      k.activations ? gb(k.activations->bytes) : "n/a", gb(k.total(l)), gb(k.device.bytes - k.total(l)),
                      gb(p.host_offloaded)});
  }
  const bool mixed = c.param_bytes != 4;
  o << verdict(k);
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
  if (!read_args(a, k, err) || !read_device(a.device, k.device, err) || !read_activations(a, k, err)) return 2;
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
