#include "analyzer/cli/memory.h"

#include <algorithm>
#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analyzer/metrics/memory_model.h"
#include "analyzer/report/table.h"
#include "tracer/format/keys.h"
#include "training/model/config.h"

namespace shardscope::cli {

namespace {
const char* strategy(int stage) {
  switch (stage) {
    case 0: return "DDP / NO_SHARD";
    case 1: return "ZeRO-1";
    case 2: return "SHARD_GRAD_OP";
    default: return "FULL_SHARD";
  }
}
std::string gb(double b) { return fmt::format("{:.1f}", b / 1e9); }
}  // namespace

int memory(const MemoryArgs& a, std::ostream& out, std::ostream& err) {
  namespace k = keys::report;
  metrics::MemoryConfig c;
  if (!a.preset.empty()) {
    try {
      train::ModelConfig m = train::preset(a.preset);
      c.params = double(train::parameter_count(m));
      for (const train::UnitLayout& u : train::unit_layouts(m)) {
        if (u.id == 0) c.root_unit_params = double(u.numel);  // the root unit stays gathered
        else c.largest_unit_params = std::max(c.largest_unit_params, double(u.numel));
      }
    } catch (const std::exception& e) {
      err << "shardscope: error: " << e.what() << "\n";
      return 2;
    }
  }
  if (a.params) c.params = *a.params;
  if (c.params <= 0) {
    err << "shardscope: error: give --preset NAME or --params N (a positive parameter count)\n";
    return 2;
  }
  if (a.world < 1) {
    err << "shardscope: error: --world must be at least 1\n";
    return 2;
  }
  if (!metrics::apply_dtype(c, a.dtype)) {
    err << "shardscope: error: unknown --dtype " << a.dtype << " (bf16, fp16, fp32)\n";
    return 2;
  }
  c.world = a.world;
  c.offload = a.offload;
  std::vector<int> stages = a.stage ? std::vector<int>{*a.stage} : std::vector<int>{0, 1, 2, 3};

  nlohmann::json j;
  j[k::kSchema] = k::kMemorySchemaValue;
  j[k::kParams] = c.params;
  j[k::kWorld] = c.world;
  j[k::kDtype] = a.dtype;
  j[k::kOffload] = c.offload;
  j[k::kStages] = nlohmann::json::array();
  report::Table t{{"stage", "strategy", "params GB", "grads GB", "optimizer GB", "model states GB", "+ largest unit GB", "on host GB"}, {}, 2};
  for (int s : stages) {
    c.stage = s;
    metrics::MemoryPrediction p = metrics::predict(c);
    j[k::kStages].push_back({{k::kStage, s},
                             {k::kModelStatesBytes, p.model_states()},
                             {k::kParamsBytes, p.params},
                             {k::kGradientsBytes, p.gradients},
                             {k::kOptimizerStateBytes, p.optimizer_state},
                             {k::kUnshardedParamsBytes, p.unsharded_params},
                             {k::kHostOffloadedBytes, p.host_offloaded}});
    if (a.stage) j[k::kModelStatesBytes] = p.model_states();
    t.rows.push_back({std::to_string(s), strategy(s), gb(p.params), gb(p.gradients), gb(p.optimizer_state), gb(p.model_states()),
                      s == 3 && c.largest_unit_params > 0 ? gb(p.unsharded_params) : "-", gb(p.host_offloaded)});
  }
  if (a.format == "json") {
    out << j.dump(2) << "\n";
  } else {
    out << fmt::format("ZeRO model states per rank: {:.4g} parameters{}, {} ranks in the sharding group, {} ({:g} + {:g} + K={:g} bytes per parameter){}\n",
                       c.params, a.preset.empty() ? "" : " (preset " + a.preset + ")", c.world, a.dtype, c.param_bytes, c.grad_bytes, c.optimizer_bytes,
                       c.offload ? ", sharded state offloaded to the host" : "");
    out << t.render(false, "  ");
    out << "  (GB = 1e9 bytes. Activations come on top; under stage 3 the largest unit's gathered parameters, and\n"
           "   the root unit's, which FSDP keeps gathered, are resident while it runs.)\n";
  }
  return 0;
}

}  // namespace shardscope::cli
