#include "training/model/transformer.h"

#include <cmath>

namespace shardscope::train {
namespace {

torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& w) {
  // Normalize in fp32 for stability whatever the parameter dtype.
  auto xf = x.to(torch::kFloat32);
  auto y = xf * torch::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + 1e-6);
  return y.to(x.scalar_type()) * w;
}

// Rotates pairs (even, odd) of each head's features by position-dependent angles (RoPE, theta 10000).
torch::Tensor rope(const torch::Tensor& x) {  // [b, s, h, d]
  int64_t s = x.size(1), d = x.size(3);
  auto opts = torch::TensorOptions().dtype(torch::kFloat32).device(x.device());
  auto inv = torch::pow(10000.0, -torch::arange(0, d, 2, opts) / double(d));  // [d/2]
  auto ang = torch::outer(torch::arange(s, opts), inv);                       // [s, d/2]
  auto cos = ang.cos().view({1, s, 1, d / 2}).to(x.scalar_type());
  auto sin = ang.sin().view({1, s, 1, d / 2}).to(x.scalar_type());
  auto pairs = x.view({x.size(0), s, x.size(2), d / 2, 2});
  auto a = pairs.select(-1, 0), b = pairs.select(-1, 1);
  return torch::stack({a * cos - b * sin, a * sin + b * cos}, -1).view(x.sizes());
}

}  // namespace

torch::Tensor block_forward(const sizing::ModelConfig& c, const ParamViews& p, const torch::Tensor& x, bool sdpa) {
  const auto& attn_norm = p[0];
  const auto& wq = p[1];
  const auto& wk = p[2];
  const auto& wv = p[3];
  const auto& wo = p[4];
  const auto& mlp_norm = p[5];
  const auto& w1 = p[6];
  const auto& w3 = p[7];
  const auto& w2 = p[8];
  int64_t b = x.size(0), s = x.size(1), hd = c.head_dim();

  auto h = rms_norm(x, attn_norm);
  auto q = rope(torch::matmul(h, wq.t()).view({b, s, c.heads, hd}));
  auto k = rope(torch::matmul(h, wk.t()).view({b, s, c.kv_heads, hd}));
  auto v = torch::matmul(h, wv.t()).view({b, s, c.kv_heads, hd});
  if (c.kv_heads != c.heads) {  // grouped-query attention: each kv head serves heads/kv_heads query heads
    k = k.repeat_interleave(c.heads / c.kv_heads, 2);
    v = v.repeat_interleave(c.heads / c.kv_heads, 2);
  }
  q = q.transpose(1, 2), k = k.transpose(1, 2), v = v.transpose(1, 2);  // [b, h, s, d]
  torch::Tensor attn;
#if TORCH_VERSION_MAJOR >= 2
  if (sdpa) attn = at::scaled_dot_product_attention(q, k, v, {}, 0.0, /*is_causal=*/true);
#endif
  if (!attn.defined()) {
    TORCH_CHECK(!sdpa, "scaled_dot_product_attention needs libtorch 2.0 or later");
    auto scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(double(hd));
    auto mask = torch::ones({s, s}, torch::TensorOptions().dtype(torch::kBool).device(x.device())).triu(1);
    scores = scores.masked_fill(mask, -std::numeric_limits<float>::infinity());
    attn = torch::matmul(torch::softmax(scores.to(torch::kFloat32), -1).to(v.scalar_type()), v);
  }
  auto out = x + torch::matmul(attn.transpose(1, 2).reshape({b, s, c.dim}), wo.t());

  auto m = rms_norm(out, mlp_norm);
  auto gate = torch::silu(torch::matmul(m, w1.t())) * torch::matmul(m, w3.t());
  return out + torch::matmul(gate, w2.t());
}

torch::Tensor embed(const ParamViews& root, const torch::Tensor& tokens) { return torch::embedding(root[0], tokens); }

torch::Tensor head_loss(const ParamViews& root, const torch::Tensor& h, const torch::Tensor& targets) {
  auto logits = torch::matmul(rms_norm(h, root[1]), root[2].t());
  return torch::nn::functional::cross_entropy(logits.reshape({-1, logits.size(-1)}).to(torch::kFloat32),
                                              targets.reshape({-1}));
}

}  // namespace shardscope::train
