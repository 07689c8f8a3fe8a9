#include "training/checkpoint.h"

#include <fstream>
#include <stdexcept>

namespace shardscope::train {
namespace {

namespace fs = std::filesystem;
constexpr uint64_t kMagic = 0x7373636b70743031ULL;  // "ssckpt01"

fs::path rank_file(const fs::path& step_dir, int rank) { return step_dir / ("rank" + std::to_string(rank) + ".bin"); }

}  // namespace

void save_checkpoint(const fs::path& dir, int step, Engine& engine, int rank, const nlohmann::json& config,
                     const std::function<void()>& barrier) {
  fs::path step_dir = dir / ("step_" + std::to_string(step));
  fs::create_directories(step_dir);
  {
    std::ofstream out(rank_file(step_dir, rank), std::ios::binary | std::ios::trunc);
    uint64_t n = engine.units().size();
    out.write(reinterpret_cast<const char*>(&kMagic), 8);
    out.write(reinterpret_cast<const char*>(&n), 8);
    for (auto& u : engine.units()) {
      for (torch::Tensor* t : {&u->master(), &u->exp_avg(), &u->exp_avg_sq()}) {
        torch::Tensor host = t->cpu().contiguous();  // from the GPU, or the tensor itself on CPU
        uint64_t len = uint64_t(host.numel());
        out.write(reinterpret_cast<const char*>(&len), 8);
        out.write(static_cast<const char*>(host.data_ptr()), std::streamsize(len * 4));
      }
    }
    if (!out) throw std::runtime_error("cannot write checkpoint " + rank_file(step_dir, rank).string());
  }
  barrier();
  if (rank == 0) {
    std::ofstream meta(step_dir / "meta.json");
    meta << nlohmann::json{{"step", step}, {"config", config}}.dump(2) << "\n";
  }
  barrier();
}

std::optional<int> load_checkpoint(const fs::path& dir, Engine& engine, int rank, const nlohmann::json& config) {
  std::error_code ec;
  int best = -1;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("step_", 0) != 0 || !fs::exists(entry.path() / "meta.json")) continue;
    best = std::max(best, std::atoi(name.c_str() + 5));
  }
  if (best < 0) return std::nullopt;
  fs::path step_dir = dir / ("step_" + std::to_string(best));
  nlohmann::json meta;
  try {
    meta = nlohmann::json::parse(std::ifstream(step_dir / "meta.json"));
  } catch (const std::exception& e) {
    throw std::invalid_argument((step_dir / "meta.json").string() + ": " + e.what());
  }
  if (meta["config"] != config)
    throw std::invalid_argument(step_dir.string() + " was written by a different configuration: " + meta["config"].dump() +
                                " (this run: " + config.dump() + ")");
  std::ifstream in(rank_file(step_dir, rank), std::ios::binary);
  if (!in) throw std::invalid_argument("missing " + rank_file(step_dir, rank).string());
  uint64_t magic = 0, n = 0;
  in.read(reinterpret_cast<char*>(&magic), 8);
  in.read(reinterpret_cast<char*>(&n), 8);
  if (magic != kMagic || n != engine.units().size())
    throw std::invalid_argument(rank_file(step_dir, rank).string() + ": not a checkpoint of this model");
  for (auto& u : engine.units()) {
    for (torch::Tensor* t : {&u->master(), &u->exp_avg(), &u->exp_avg_sq()}) {
      uint64_t len = 0;
      in.read(reinterpret_cast<char*>(&len), 8);
      if (!in || len != uint64_t(t->numel()))
        throw std::invalid_argument(rank_file(step_dir, rank).string() + ": damaged (unit " + std::to_string(u->id()) + ")");
      torch::Tensor host = torch::empty({int64_t(len)}, torch::kFloat32);
      in.read(static_cast<char*>(host.data_ptr()), std::streamsize(len * 4));
      torch::NoGradGuard no_grad;
      t->copy_(host);
    }
  }
  if (!in) throw std::invalid_argument(rank_file(step_dir, rank).string() + ": truncated");
  engine.after_optimizer();  // refresh persistent full parameters from the loaded masters
  return best;
}

}  // namespace shardscope::train
