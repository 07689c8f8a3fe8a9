#include "training/config_check.h"

#include <torch/torch.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace shardscope::train {
namespace {

// Bytes travel as F32 elements: both backends copy an all-gather's elements bit for bit.
std::vector<float> as_floats(const void* data, size_t bytes) {
  std::vector<float> v((bytes + 3) / 4, 0.0f);
  if (bytes) std::memcpy(v.data(), data, bytes);
  return v;
}

// Every rank's `mine` (the same size on every rank), in rank order.
std::vector<float> all_gather(Group& g, const std::vector<float>& mine, bool cuda, int device) {
  const auto opts = torch::TensorOptions().dtype(torch::kFloat32);
  torch::Tensor in = torch::from_blob(const_cast<float*>(mine.data()), {int64_t(mine.size())}, opts).clone();
  torch::Tensor out = torch::empty({int64_t(mine.size()) * g.size()}, opts);
  if (cuda) {
    in = in.to(torch::Device(torch::kCUDA, int16_t(device)));
    out = out.to(in.device());
  }
  g.all_gather(out.data_ptr(), in.data_ptr(), mine.size(), DType::F32, g.fence());
  out = out.to(torch::kCPU);
  return std::vector<float>(out.data_ptr<float>(), out.data_ptr<float>() + out.numel());
}

}  // namespace

std::optional<RankMismatch> compare_across_ranks(Group& world, const nlohmann::json& config, bool cuda, int device) {
  const int n = world.size();
  if (n == 1) return std::nullopt;
  const uint64_t digest = config_digest(config);
  const std::vector<float> digests = all_gather(world, as_floats(&digest, sizeof digest), cuda, device);
  auto digest_of = [&](int r) {
    uint64_t d;
    std::memcpy(&d, digests.data() + size_t(r) * 2, sizeof d);
    return d;
  };
  int differing = -1;
  for (int r = 1; r < n && differing < 0; ++r)
    if (digest_of(r) != digest_of(0)) differing = r;
  if (differing < 0) return std::nullopt;

  // Only when they differ: the configurations themselves, to name what differs. Lengths first, then every
  // rank's text padded to the longest.
  const std::string text = config.dump();
  const uint32_t len = uint32_t(text.size());
  const std::vector<float> lens = all_gather(world, as_floats(&len, sizeof len), cuda, device);
  std::vector<uint32_t> length(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) std::memcpy(&length[size_t(r)], &lens[size_t(r)], sizeof(uint32_t));
  const size_t longest = *std::max_element(length.begin(), length.end());
  std::vector<float> mine((longest + 3) / 4, 0.0f);
  std::memcpy(mine.data(), text.data(), text.size());
  const std::vector<float> texts = all_gather(world, mine, cuda, device);
  auto config_of = [&](int r) {
    const char* p = reinterpret_cast<const char*>(texts.data() + size_t(r) * mine.size());
    return nlohmann::json::parse(std::string(p, length[size_t(r)]));
  };
  RankMismatch m;
  m.rank = differing;
  // Texts that differ only in what parsing erases still get a name.
  if (auto d = first_difference(config_of(0), config_of(differing))) m.difference = *d;
  else
    m.difference = {"configuration digest", std::to_string(digest_of(0)), std::to_string(digest_of(differing)), false};
  return m;
}

std::string describe(const RankMismatch& m) {
  return "rank " + std::to_string(m.rank) + "'s configuration differs from rank 0's: " + m.difference.flag + " " +
         m.difference.saved + " vs " + m.difference.given;
}

}  // namespace shardscope::train
