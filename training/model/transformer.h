// The decoder-only transformer, written as functions of explicit parameter tensors so that an FSDP unit can
// hand in views of its all-gathered flat parameter: RMSNorm -> causal self-attention with rotary position
// embeddings -> RMSNorm -> SwiGLU MLP per block; token embedding, final norm and LM head in the root.
#pragma once

#include <torch/torch.h>
#include <torch/version.h>

#include <vector>

#include "sizing/presets.h"

namespace shardscope::train {

// Views of one unit's parameters, in the order of its sizing::UnitLayout (sizing/presets.h).
using ParamViews = std::vector<torch::Tensor>;

// at::scaled_dot_product_attention exists from libtorch 2.0 (Debian's 1.13 has none).
inline constexpr bool kHaveSdpa = TORCH_VERSION_MAJOR >= 2;

// x: [batch, seq, dim] -> [batch, seq, dim]. sdpa: attention through at::scaled_dot_product_attention (flash or
// memory-efficient kernels, no s x s scores kept), needs kHaveSdpa; else the scores are materialised and the
// softmax taken in fp32.
torch::Tensor block_forward(const sizing::ModelConfig& c, const ParamViews& p, const torch::Tensor& x,
                            bool sdpa = false);
// tokens: [batch, seq] int64 -> [batch, seq, dim]
torch::Tensor embed(const ParamViews& root, const torch::Tensor& tokens);
// Mean next-token cross-entropy: h [batch, seq, dim], targets [batch, seq].
torch::Tensor head_loss(const ParamViews& root, const torch::Tensor& h, const torch::Tensor& targets);

}  // namespace shardscope::train
