// The trainer against stock libtorch. equivalence_test compares strategies with a 1-rank run of the same
// trainer, so a bug in the maths every strategy shares (the transformer, the loss, the hand-written AdamW, the
// schedule, the clipping) passes it. Here the reference is independent code built from libtorch's own pieces:
// torch::nn::Embedding / Linear / MultiheadAttention / SiLU, torch::nn::functional::cross_entropy,
// torch::nn::utils::clip_grad_norm_ and torch::optim::AdamW. It starts from the trainer's initial parameters
// (--dump-initial-params, copied in by name and shape, so initialization is not what is compared), trains on
// the same global batches, and the trainer's per-step losses, gradient norms and learning rates and its final
// parameters (gathered from the shards by --dump-params) must equal the reference's, for every strategy on
// 1, 2 and 4 ranks, in fp32 and (within bf16's tolerance) with bf16 parameters and reductions.
//
// What libtorch (1.13 and 2.x alike) has no piece for is written here, in a different form from the trainer's:
// RMSNorm (torch::nn::RMSNorm only arrived in 2.4), rotary embeddings (as a complex multiplication, the Llama
// reference's form, against the trainer's real sin/cos pairs) and the warmup + cosine learning rate (the
// C++ optimizers have no such scheduler; the value is set on the param group each step).
//
// Not checked against anything outside shardscope here: the initialization (copied from the trainer, so its
// distribution is not compared) and the batches (the trainer's own data source, linked in, so both sides see
// the same tokens; what they are is not checked). Planted by hand once: an attention scale of 1/sqrt(dim)
// instead of 1/sqrt(head_dim) fails the fp32 cases (losses 5e-4 apart; the bf16 bounds are too wide to see
// it), a second moment without bias correction fails fp32 and bf16 (losses 4 % apart); equivalence_test passed
// with either.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <tuple>

#include "sizing/presets.h"
#include "tests/training/ranks.h"
#include "training/data/data.h"

namespace shardscope::test {
namespace {

namespace F = torch::nn::functional;

constexpr int kSteps = 5, kGlobalBatch = 4, kWarmup = 2;
constexpr uint64_t kSeed = 11;
constexpr double kLr = 3e-3, kMaxGradNorm = 1.0;
// The trainer's AdamW hyper-parameters (training/optim/adamw.h): betas, eps, decoupled weight decay on every
// parameter, cosine decay to a tenth of the peak rate.
constexpr double kBeta1 = 0.9, kBeta2 = 0.95, kEps = 1e-8, kWeightDecay = 0.1, kMinLrRatio = 0.1;

struct RMSNormImpl : torch::nn::Module {
  explicit RMSNormImpl(int64_t dim) : weight(register_parameter("weight", torch::ones({dim}))) {}
  torch::Tensor forward(const torch::Tensor& x) {
    // x / sqrt(mean(x^2) + eps), as ||x|| / sqrt(dim)
    const double dim = double(x.size(-1));
    auto norm = x.norm(c10::optional<at::Scalar>(2.0), std::vector<int64_t>{-1}, /*keepdim=*/true);
    return x / torch::sqrt(norm.square() / dim + 1e-6) * weight;
  }
  torch::Tensor weight;
};
TORCH_MODULE(RMSNorm);

// Rotary position embedding, theta 10000, on consecutive feature pairs of each head, as multiplication by
// e^{i * position * theta^(-2j/d)} of the pairs read as complex numbers. x: [batch, seq, heads, head_dim].
torch::Tensor rotary(const torch::Tensor& x) {
  const int64_t s = x.size(1), d = x.size(3);
  auto j = torch::arange(d / 2, torch::kFloat64);
  auto freq = torch::exp(j * (-2.0 * std::log(10000.0) / double(d)));
  auto angle = torch::arange(s, torch::kFloat64).unsqueeze(1) * freq.unsqueeze(0);  // [s, d/2]
  auto turn = torch::complex(torch::cos(angle), torch::sin(angle)).to(torch::kComplexFloat).view({1, s, 1, d / 2});
  auto z = torch::view_as_complex(x.to(torch::kFloat32).reshape({x.size(0), s, x.size(2), d / 2, 2}).contiguous());
  return torch::view_as_real(z * turn).reshape(x.sizes());
}

struct BlockImpl : torch::nn::Module {
  explicit BlockImpl(const sizing::ModelConfig& c) : c(c) {
    auto linear = [&](const char* name, int64_t in, int64_t out) {
      return register_module(name, torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(false)));
    };
    attn_norm = register_module("attn_norm", RMSNorm(c.dim));
    wq = linear("wq", c.dim, c.dim);
    wk = linear("wk", c.dim, c.kv_dim());
    wv = linear("wv", c.dim, c.kv_dim());
    // libtorch's attention: per-head split, 1/sqrt(head_dim) scaling, masked softmax, weighted sum and the
    // output projection (its out_proj is wo). Rotary embeddings must act between the projections and the
    // scores, where the module has no hook, so the projections are wq/wk/wv above and its own input
    // projection is the identity, frozen.
    attn = register_module(
        "attn", torch::nn::MultiheadAttention(torch::nn::MultiheadAttentionOptions(c.dim, c.heads).bias(false)));
    {
      torch::NoGradGuard no_grad;
      attn->in_proj_weight.copy_(torch::eye(c.dim).repeat({3, 1}));
    }
    attn->in_proj_weight.set_requires_grad(false);
    mlp_norm = register_module("mlp_norm", RMSNorm(c.dim));
    w1 = linear("w1", c.dim, c.ffn_dim);
    w3 = linear("w3", c.dim, c.ffn_dim);
    w2 = linear("w2", c.ffn_dim, c.dim);
  }
  torch::Tensor forward(const torch::Tensor& x) {  // [b, s, dim]
    const int64_t b = x.size(0), s = x.size(1), hd = c.head_dim();
    auto h = attn_norm(x);
    auto q = rotary(wq(h).view({b, s, c.heads, hd})).reshape({b, s, c.dim});
    auto k = rotary(wk(h).view({b, s, c.kv_heads, hd}));
    auto v = wv(h).view({b, s, c.kv_heads, hd});
    // Grouped-query attention: query head i reads key/value head i / (heads / kv_heads).
    const int64_t group = c.heads / c.kv_heads;
    k = k.unsqueeze(3).expand({b, s, c.kv_heads, group, hd}).reshape({b, s, c.dim});
    v = v.unsqueeze(3).expand({b, s, c.kv_heads, group, hd}).reshape({b, s, c.dim});
    // Causal: position i attends to positions <= i (an additive mask, which both 1.13 and 2.x take).
    auto mask = torch::full({s, s}, -std::numeric_limits<float>::infinity()).triu(1);
    auto out = std::get<0>(attn->forward(q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1),
                                         /*key_padding_mask=*/torch::Tensor(),
                                         /*need_weights=*/false, mask));
    auto y = x + out.transpose(0, 1);
    auto m = mlp_norm(y);
    return y + w2(silu(w1(m)) * w3(m));
  }
  sizing::ModelConfig c;
  RMSNorm attn_norm = nullptr, mlp_norm = nullptr;
  torch::nn::Linear wq = nullptr, wk = nullptr, wv = nullptr, w1 = nullptr, w3 = nullptr, w2 = nullptr;
  torch::nn::MultiheadAttention attn = nullptr;
  torch::nn::SiLU silu;
};
TORCH_MODULE(Block);

struct ReferenceModelImpl : torch::nn::Module {
  explicit ReferenceModelImpl(const sizing::ModelConfig& c) {
    tok_embedding = register_module("tok_embedding", torch::nn::Embedding(c.vocab, c.dim));
    for (int64_t l = 0; l < c.layers; ++l) blocks.push_back(register_module("block" + std::to_string(l), Block(c)));
    final_norm = register_module("final_norm", RMSNorm(c.dim));
    lm_head = register_module("lm_head", torch::nn::Linear(torch::nn::LinearOptions(c.dim, c.vocab).bias(false)));
  }
  torch::Tensor forward(const torch::Tensor& tokens) {  // -> logits [b, s, vocab]
    auto x = tok_embedding(tokens);
    for (auto& b : blocks) x = b(x);
    return lm_head(final_norm(x));
  }
  torch::nn::Embedding tok_embedding = nullptr;
  std::vector<Block> blocks;
  RMSNorm final_norm = nullptr;
  torch::nn::Linear lm_head = nullptr;
};
TORCH_MODULE(ReferenceModel);

// The reference's parameters in the trainer's dump order (sizing::unit_layouts: the root unit, then each
// block), checked against the layout's shapes.
std::vector<torch::Tensor> in_dump_order(ReferenceModel& m, const sizing::ModelConfig& c) {
  std::vector<torch::Tensor> out;
  for (const sizing::UnitLayout& u : sizing::unit_layouts(c)) {
    std::map<std::string, torch::Tensor> by_name;
    if (u.id == 0) {
      by_name = {{"tok_embedding", m->tok_embedding->weight},
                 {"final_norm", m->final_norm->weight},
                 {"lm_head", m->lm_head->weight}};
    } else {
      Block& b = m->blocks[size_t(u.id - 1)];
      by_name = {{"attn_norm", b->attn_norm->weight},
                 {"wq", b->wq->weight},
                 {"wk", b->wk->weight},
                 {"wv", b->wv->weight},
                 {"wo", b->attn->out_proj->weight},
                 {"mlp_norm", b->mlp_norm->weight},
                 {"w1", b->w1->weight},
                 {"w3", b->w3->weight},
                 {"w2", b->w2->weight}};
    }
    for (const sizing::ParamSpec& p : u.params) {
      auto it = by_name.find(p.name);
      if (it == by_name.end()) throw std::runtime_error("the reference has no parameter " + u.name + "." + p.name);
      if (it->second.sizes() != torch::IntArrayRef(p.shape))
        throw std::runtime_error("shape of " + u.name + "." + p.name);
      out.push_back(it->second);
    }
  }
  return out;
}

// The trainer's schedule as its documentation states it: linear warmup over `warmup` steps to the peak, then
// cosine decay to kMinLrRatio of it at the last step.
double schedule(int step, int warmup, int total) {
  if (step < warmup) return kLr * double(step + 1) / warmup;
  const double progress = std::min(1.0, double(step - warmup) / std::max(1, total - warmup));
  const double floor = kLr * kMinLrRatio;
  return floor + (kLr - floor) * (std::cos(progress * M_PI) + 1.0) / 2.0;
}

struct Trajectory {
  std::vector<double> losses, grad_norms, lrs;
  std::vector<float> params;  // final, in dump order
};

Trajectory train_reference(const sizing::ModelConfig& c, const std::vector<float>& initial) {
  torch::manual_seed(0);  // the modules' own initialization is overwritten below
  ReferenceModel model(c);
  for (const auto& b : model->blocks) EXPECT_FALSE(b->attn->out_proj->bias.defined()) << "attention has no biases";
  std::vector<torch::Tensor> params = in_dump_order(model, c);
  {
    torch::NoGradGuard no_grad;
    int64_t at = 0;
    for (auto& p : params) {
      EXPECT_LE(at + p.numel(), int64_t(initial.size()));
      p.copy_(torch::from_blob(const_cast<float*>(initial.data()) + at, p.sizes(), torch::kFloat32));
      at += p.numel();
    }
    EXPECT_EQ(at, int64_t(initial.size())) << "the dump holds exactly the model's parameters";
  }
  torch::optim::AdamW opt(
      params,
      torch::optim::AdamWOptions(kLr).betas(std::make_tuple(kBeta1, kBeta2)).eps(kEps).weight_decay(kWeightDecay));
  auto data = train::make_data("synthetic", c.vocab, c.seq_len, kSeed);
  Trajectory t;
  for (int step = 0; step < kSteps; ++step) {
    torch::Tensor tokens, targets;
    data->batch(step, 0, kGlobalBatch, tokens, targets);  // the whole global batch the ranks split
    opt.zero_grad();
    auto logits = model->forward(tokens);
    auto loss = F::cross_entropy(logits.reshape({-1, c.vocab}), targets.reshape({-1}));
    loss.backward();
    const double norm = torch::nn::utils::clip_grad_norm_(params, kMaxGradNorm);
    const double lr = schedule(step, kWarmup, kSteps);
    for (auto& group : opt.param_groups()) static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
    opt.step();
    t.losses.push_back(loss.item<double>());
    t.grad_norms.push_back(norm);
    t.lrs.push_back(lr);
  }
  auto flat = torch::cat([&] {
    std::vector<torch::Tensor> v;
    for (auto& p : params) v.push_back(p.detach().reshape({-1}));
    return v;
  }());
  t.params.assign(flat.data_ptr<float>(), flat.data_ptr<float>() + flat.numel());
  return t;
}

// "unit.param[i]" of the flat dump's element `at`.
std::string parameter_name(const sizing::ModelConfig& c, size_t at) {
  int64_t base = 0;
  for (const sizing::UnitLayout& u : sizing::unit_layouts(c)) {
    if (int64_t(at) < base + u.numel) {
      for (const sizing::ParamSpec& p : u.params)
        if (int64_t(at) - base < p.offset + p.numel())
          return u.name + "." + p.name + "[" + std::to_string(int64_t(at) - base - p.offset) + "]";
    }
    base += u.numel;
  }
  return "?";
}

struct Tolerance {
  double loss_rel, norm_rel;
  double param_max;   // absolute, the worst entry; negative: twice the distance the schedule lets an entry move
  double param_rms;   // absolute, over all parameters
  double update_rel;  // rms(trainer - reference) / rms(reference - initial)
};

// fp32: the two computations differ only in summation order (GEMMs split across ranks, a ring reduction,
// libtorch's attention against the trainer's, complex rotation against sin/cos pairs), so losses and gradient
// norms agree to float rounding (observed: 3e-7 relative) and parameters at rms float rounding (observed
// 3.7e-7). AdamW divides each gradient by its own running magnitude, so an entry whose gradient nearly
// cancels moves by lr a step in a direction that rounding can tilt: the worst entry is bounded at a sixth of
// one step at the peak rate (observed 1.3e-4, an lm_head row of a token that is rarely a target).
constexpr Tolerance kFp32{1e-5, 1e-4, 5e-4, 1e-6, 1e-3};
// bf16 parameters and reductions (fp32 masters) against the fp32 reference: bf16 keeps 8 bits of mantissa,
// so the loss is held to 2 % (as precision_test holds bf16 against the trainer's fp32; observed 0.13 %) and
// the gradient norm, which sums the squares of bf16 gradients, to 25 % (observed up to 10.5 %). Where a
// rounded gradient flips the sign of a small entry's Adam step, that entry can end as far off as moving the
// other way at every step, so the worst entry bounds nothing tighter than that; the whole update is bounded
// instead: its rms difference under a fifth of the rms update and under 1e-3 absolute. Observed 4.4 % and
// 2.6e-4 on an Intel Xeon; 10.0-10.2 % and 5.9-6.1e-4 on an AMD EPYC without AVX-512, where libtorch's bf16
// kernels take another path (the same commit, 2026-11-28), so a tenth was the CPU's verdict, not the trainer's.
constexpr Tolerance kBf16{2e-2, 0.25, -1, 1e-3, 0.2};

using Case = std::tuple<std::string, int, std::string>;  // sharding, ranks, param/reduce dtype

class AgainstStockLibtorch : public ::testing::TestWithParam<Case> {};

TEST_P(AgainstStockLibtorch, SameLossesAndParameters) {
  const auto& [sharding, n, dtype] = GetParam();
  const sizing::ModelConfig c = sizing::preset("tiny");
  TempDir dir;
  std::vector<std::string> args = {"--preset",
                                   "tiny",
                                   "--steps",
                                   std::to_string(kSteps),
                                   "--warmup",
                                   std::to_string(kWarmup),
                                   "--seed",
                                   std::to_string(kSeed),
                                   "--lr",
                                   "0.003",
                                   "--max-grad-norm",
                                   "1",
                                   "--sharding",
                                   sharding,
                                   "--batch-size",
                                   std::to_string(kGlobalBatch / n),
                                   "--param-dtype",
                                   dtype,
                                   "--reduce-dtype",
                                   dtype,
                                   "--log-json",
                                   (dir.path() / "log.json").string(),
                                   "--dump-initial-params",
                                   (dir.path() / "initial.bin").string(),
                                   "--dump-params",
                                   (dir.path() / "params.bin").string()};
  if (sharding == "hybrid_shard") args.insert(args.end(), {"--ranks-per-node", std::to_string(std::max(1, n / 2))});
  auto ranks = run_ranks(n, args, dir.path());
  for (size_t r = 0; r < ranks.size(); ++r) ASSERT_EQ(ranks[r].rc, 0) << "rank " << r << ": " << ranks[r].stderr_text();

  const std::vector<float> initial = read_floats(dir.path() / "initial.bin");
  ASSERT_EQ(int64_t(initial.size()), sizing::parameter_count(c));
  torch::set_num_threads(1);
  const Trajectory ref = train_reference(c, initial);

  const Tolerance& tol = dtype == "bf16" ? kBf16 : kFp32;
  auto log = read_log(dir.path() / "log.json");
  ASSERT_EQ(log.size(), size_t(kSteps));
  double worst_loss = 0;
  for (int s = 0; s < kSteps; ++s) {
    const auto& line = log[size_t(s)];
    const double loss = line["loss"], norm = line["grad_norm"], lr = line["lr"];
    const double rel = std::fabs(loss - ref.losses[size_t(s)]) / ref.losses[size_t(s)];
    worst_loss = std::max(worst_loss, rel);
    EXPECT_LE(rel, tol.loss_rel) << "step " << s << " loss: trainer " << loss << ", libtorch " << ref.losses[size_t(s)];
    EXPECT_LE(std::fabs(norm - ref.grad_norms[size_t(s)]) / ref.grad_norms[size_t(s)], tol.norm_rel)
        << "step " << s << " gradient norm: trainer " << norm << ", libtorch " << ref.grad_norms[size_t(s)];
    EXPECT_NEAR(lr, ref.lrs[size_t(s)], 1e-9) << "step " << s << " learning rate";
  }
  const std::vector<float> params = read_floats(dir.path() / "params.bin");
  ASSERT_EQ(params.size(), ref.params.size());
  double worst = 0, sq = 0, moved = 0;
  size_t worst_at = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    const double d = std::fabs(double(params[i]) - double(ref.params[i]));
    if (d > worst) worst = d, worst_at = i;
    sq += d * d;
    const double u = double(ref.params[i]) - double(initial[i]);
    moved += u * u;
  }
  const double rms = std::sqrt(sq / double(params.size())), update_rel = std::sqrt(sq / moved);
  std::printf(
      "%s %d rank(s) %s: losses within %.3g (relative); parameters max |diff| %.3g (%s: trainer %.6g, libtorch %.6g, "
      "initial %.6g), rms %.3g, %.3g of the update\n",
      sharding.c_str(), n, dtype.c_str(), worst_loss, worst, parameter_name(c, worst_at).c_str(), params[worst_at],
      ref.params[worst_at], initial[worst_at], rms, update_rel);
  ::testing::Test::RecordProperty("max_loss_rel_diff", std::to_string(worst_loss));
  ::testing::Test::RecordProperty("max_abs_diff", std::to_string(worst));
  ::testing::Test::RecordProperty("rms_diff", std::to_string(rms));
  EXPECT_GT(moved, 0) << "training moved the parameters";
  double travel = 0;  // the farthest an entry can move: lr a step (Adam's normalized step), without decay
  for (double lr : ref.lrs) travel += lr;
  EXPECT_LE(worst, tol.param_max >= 0 ? tol.param_max : 2 * travel) << "largest parameter difference";
  EXPECT_LE(rms, tol.param_rms) << "rms parameter difference";
  EXPECT_LE(update_rel, tol.update_rel) << "difference relative to the update";
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return std::get<0>(info.param) + "_" + std::to_string(std::get<1>(info.param)) + "ranks_" + std::get<2>(info.param);
}

INSTANTIATE_TEST_SUITE_P(Fp32, AgainstStockLibtorch,
                         ::testing::Combine(::testing::Values("no_shard", "zero1", "shard_grad_op", "full_shard",
                                                              "hybrid_shard"),
                                            ::testing::Values(1, 2, 4), ::testing::Values("fp32")),
                         case_name);
INSTANTIATE_TEST_SUITE_P(Bf16, AgainstStockLibtorch,
                         ::testing::Combine(::testing::Values("no_shard", "zero1", "shard_grad_op", "full_shard",
                                                              "hybrid_shard"),
                                            ::testing::Values(1, 2, 4), ::testing::Values("bf16")),
                         case_name);

}  // namespace
}  // namespace shardscope::test
