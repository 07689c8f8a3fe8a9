#include "training/checkpoint.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "training/checkpoint_file.h"

namespace shardscope::train {
namespace {

namespace fs = std::filesystem;
// meta.json holds the configuration and the unit table: megabytes at most. A larger one is not the trainer's.
constexpr uintmax_t kMaxMetaBytes = 256u << 20;

fs::path rank_file(const fs::path& step_dir, int rank) { return step_dir / ("rank" + std::to_string(rank) + ".bin"); }

// N of a folder named step_N (digits only, an int), or -1.
int step_of(const std::string& name) {
  if (name.rfind("step_", 0) != 0 || name.size() == 5 || name.size() > 5 + 9) return -1;
  int n = 0;
  for (size_t i = 5; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return -1;
    n = n * 10 + (name[i] - '0');
  }
  return n;
}

// The size of a regular file; throws naming it otherwise (a FIFO would block the read, a folder fails it).
uintmax_t regular_file_size(const fs::path& p) {
  std::error_code ec;
  const fs::file_status st = fs::status(p, ec);
  if (ec || !fs::exists(st)) throw std::invalid_argument("missing " + p.string());
  if (!fs::is_regular_file(st)) throw std::invalid_argument(p.string() + ": not a regular file");
  const uintmax_t size = fs::file_size(p, ec);
  if (ec) throw std::invalid_argument(p.string() + ": cannot read (" + ec.message() + ")");
  return size;
}

// The flag (or variable) that sets each saved key, and whether the saved state depends on it. Keys not listed
// are layout: refusing an unknown difference is safer than loading state that may not fit.
struct KeyInfo {
  const char* key;
  const char* flag;
  bool layout;
};
constexpr KeyInfo kKeys[] = {
    {"sharding", "--sharding", true},
    {"param_dtype", "--param-dtype", true},
    {"reduce_dtype", "--reduce-dtype", true},
    {"world_size", "WORLD_SIZE", true},
    {"ranks_per_node", "--ranks-per-node (or LOCAL_WORLD_SIZE)", true},
    {"shard_size", "shard size", true},
    {"cpu_offload", "--cpu-offload", true},
    {"optimizer", "optimizer", true},
    {"device", "--device", true},
    {"units", "unit layout", true},
    {"model.preset", "--preset", true},
    {"model.layers", "--layers", true},
    {"model.dim", "--dim", true},
    {"model.heads", "--heads", true},
    {"model.kv_heads", "--kv-heads", true},
    {"model.ffn_dim", "--ffn-dim", true},
    {"model.vocab", "--vocab", true},
    {"model.seq_len", "--seq-len", true},
    {"model.params", "parameter count", true},
    // Neither the shapes nor the sharded state depend on these.
    {"batch_size", "--batch-size", false},
    {"activation_checkpointing", "--activation-checkpointing", false},
    {"planted_delay", "--slow-rank", false},
    {"steps", "--steps", false},
    {"lr", "--lr", false},
    {"seed", "--seed", false},
    {"warmup", "--warmup", false},
    {"max_grad_norm", "--max-grad-norm", false},
    {"data", "--data", false},
    // Compared across ranks at start only (training/config_check.h): the schedule of the collectives, and
    // collectives every rank must join.
    {"backward_prefetch", "--backward-prefetch", false},
    {"forward_prefetch", "--forward-prefetch", false},
    {"limit_all_gathers", "--limit-all-gathers", false},
    {"stop_after", "--stop-after", false},
    {"save_every", "--save-every", false},
    {"checkpoint_dir", "--checkpoint-dir", false},
    {"resume", "--resume", false},
    {"dump_params", "--dump-params", false},
};

// The settings the saved state depends on: the configuration less the keys kKeys marks as not layout. A resume
// may change those (with a warning), so they stay out of a shard's config digest.
nlohmann::json layout_settings(nlohmann::json config) {
  for (const KeyInfo& k : kKeys)
    if (!k.layout) config.erase(k.key);
  return config;
}

std::string shown(const nlohmann::json& v) {
  if (v.is_null()) return "(not set)";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array()) return std::to_string(v.size()) + " units";  // the unit table: its size says enough
  std::string s = v.dump();
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

void collect(const nlohmann::json& saved, const nlohmann::json& given, const std::string& prefix,
             std::vector<ConfigDifference>& out) {
  std::vector<std::string> names;
  for (auto it = saved.begin(); it != saved.end(); ++it) names.push_back(it.key());
  for (auto it = given.begin(); it != given.end(); ++it)
    if (!saved.contains(it.key())) names.push_back(it.key());
  for (const std::string& name : names) {
    const std::string key = prefix + name;
    nlohmann::json a = saved.contains(name) ? saved[name] : nlohmann::json(),
                   b = given.contains(name) ? given[name] : nlohmann::json();
    if (a == b) continue;
    if (name == "model" && a.is_object() && b.is_object()) {
      collect(a, b, key + ".", out);
      continue;
    }
    ConfigDifference d{key, shown(a), shown(b), true};
    for (const KeyInfo& k : kKeys)
      if (key == k.key) d.flag = k.flag, d.layout = k.layout;
    out.push_back(d);
  }
}

}  // namespace

std::vector<ConfigDifference> compare_configs(const nlohmann::json& saved_config, const nlohmann::json& saved_run,
                                              const nlohmann::json& config, const nlohmann::json& run) {
  std::vector<ConfigDifference> out;
  collect(saved_config, config, "", out);
  // A checkpoint from before the run settings were saved has none to compare.
  if (saved_run.is_object() && !saved_run.empty()) collect(saved_run, run, "", out);
  // A different model or world changes the unit table too; naming the cause is enough.
  bool other_layout = false;
  for (const ConfigDifference& d : out) other_layout |= d.layout && d.flag != "unit layout";
  if (other_layout) std::erase_if(out, [](const ConfigDifference& d) { return d.flag == "unit layout"; });
  return out;
}

std::optional<ConfigDifference> first_difference(const nlohmann::json& a, const nlohmann::json& b) {
  std::vector<ConfigDifference> diffs = compare_configs(a, {}, b, {});
  // A preset overridden by a flag is "custom": the flag that overrode it says more.
  if (diffs.size() > 1)
    std::erase_if(diffs, [](const ConfigDifference& d) {
      return d.flag == "--preset" && (d.saved == "custom" || d.given == "custom");
    });
  if (diffs.empty()) return std::nullopt;
  // The table's order: the flags a user sets before the values derived from them; unknown keys last.
  auto order = [](const ConfigDifference& d) {
    size_t i = 0;
    while (i < std::size(kKeys) && d.flag != kKeys[i].flag) ++i;
    return i;
  };
  return *std::min_element(diffs.begin(), diffs.end(),
                           [&](const ConfigDifference& x, const ConfigDifference& y) { return order(x) < order(y); });
}

std::string describe_differences(const std::vector<ConfigDifference>& diffs, bool layout) {
  std::string s;
  for (const ConfigDifference& d : diffs) {
    if (d.layout != layout) continue;
    if (!s.empty()) s += "; ";
    s += d.flag + ": checkpoint " + d.saved + ", flags " + d.given;
  }
  return s;
}

CheckpointInfo newest_checkpoint(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec))
    throw std::invalid_argument("--resume: checkpoint folder " + dir.string() + " does not exist");
  if (!fs::is_directory(dir, ec)) throw std::invalid_argument("--resume: " + dir.string() + " is not a folder");
  CheckpointInfo info;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const int step = step_of(entry.path().filename().string());
    if (step < 0 || !fs::exists(entry.path() / "meta.json", ec)) continue;
    info.step = std::max(info.step, step);
  }
  if (info.step < 0)
    throw std::invalid_argument("--resume: " + dir.string() + " holds no complete checkpoint (no step_N/meta.json)");
  info.dir = dir / ("step_" + std::to_string(info.step));
  const fs::path meta = info.dir / "meta.json";
  const uintmax_t size = regular_file_size(meta);
  if (size > kMaxMetaBytes)
    throw std::invalid_argument(meta.string() + ": " + std::to_string(size) +
                                " bytes, too large for checkpoint metadata");
  std::ifstream in(meta, std::ios::binary);
  std::string text(size_t(size), '\0');
  if (!in.read(text.data(), std::streamsize(size))) throw std::invalid_argument(meta.string() + ": cannot read");
  info.meta = parse_checkpoint_meta(text, meta.string(), info.step);
  return info;
}

void save_checkpoint(const fs::path& dir, int step, Engine& engine, int rank, int world, const nlohmann::json& config,
                     const std::function<void()>& barrier, const nlohmann::json& run) {
  fs::path step_dir = dir / ("step_" + std::to_string(step));
  fs::create_directories(step_dir);
  {
    std::ofstream out(rank_file(step_dir, rank), std::ios::binary | std::ios::trunc);
    ShardWriter shard(out, {step, rank, world, config_digest(layout_settings(config))}, engine.units().size());
    for (auto& u : engine.units()) {
      for (torch::Tensor* t : {&u->master(), &u->exp_avg(), &u->exp_avg_sq()}) {
        torch::Tensor host = t->cpu().contiguous();  // from the GPU, or the tensor itself on CPU
        shard.tensor(host.data_ptr(), uint64_t(host.numel()));
      }
    }
    shard.finish();
    if (!out) throw std::runtime_error("cannot write checkpoint " + rank_file(step_dir, rank).string());
  }
  barrier();
  if (rank == 0) {
    std::ofstream meta(step_dir / "meta.json");
    meta << nlohmann::json{{"version", kCheckpointVersion}, {"step", step}, {"config", config}, {"run", run}}.dump(2)
         << "\n";
  }
  barrier();
}

std::optional<int> load_checkpoint(const fs::path& dir, Engine& engine, int rank, int world,
                                   const nlohmann::json& config) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return std::nullopt;
  CheckpointInfo info = newest_checkpoint(dir);
  const int best = info.step;
  const fs::path step_dir = info.dir;
  const std::string layout = describe_differences(
      compare_configs(info.meta.value("config", nlohmann::json::object()), nlohmann::json(), config, nlohmann::json()),
      true);
  if (!layout.empty())
    throw std::invalid_argument(step_dir.string() + " was written with a different layout: " + layout);
  // The whole shard is checked (structure, checksum) before any of it is loaded.
  const fs::path file = rank_file(step_dir, rank);
  const std::string name = file.string();
  const uintmax_t size = regular_file_size(file);
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::invalid_argument(name + ": cannot open");
  const ShardLayout shard = check_shard(in, size, name);
  if (shard.version != meta_version(info.meta))
    throw std::invalid_argument(name + ": damaged: a version " + std::to_string(shard.version) +
                                " shard in a version " + std::to_string(meta_version(info.meta)) + " checkpoint");
  // A shard copied in from another step, rank or run would load without a word otherwise.
  check_shard_identity(shard, {best, rank, world, config_digest(layout_settings(config))}, name);
  if (shard.units != engine.units().size()) throw std::invalid_argument(name + ": not a checkpoint of this model");
  in.clear();
  in.seekg(std::streamoff(shard.data_offset));
  size_t i = 0;
  for (auto& u : engine.units()) {
    for (torch::Tensor* t : {&u->master(), &u->exp_avg(), &u->exp_avg_sq()}) {
      const uint64_t len = shard.lengths[i++];
      if (len != uint64_t(t->numel()))
        throw std::invalid_argument(name + ": not a checkpoint of this model (unit " + std::to_string(u->id()) +
                                    " has " + std::to_string(t->numel()) + " values, the shard " + std::to_string(len) +
                                    ")");
      torch::Tensor host = torch::empty({int64_t(len)}, torch::kFloat32);
      in.seekg(8, std::ios::cur);  // the length, checked above
      in.read(static_cast<char*>(host.data_ptr()), std::streamsize(len * 4));
      torch::NoGradGuard no_grad;
      t->copy_(host);
    }
  }
  if (!in) throw std::invalid_argument(name + ": truncated while loading (changed since it was checked?)");
  engine.after_optimizer();  // refresh persistent full parameters from the loaded masters
  return best;
}

}  // namespace shardscope::train
