// SPEC's activation memory (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
// Transformer Models", §4): per transformer layer s·b·h·(34 + 5·a·s/h) bytes without recomputation; with
// full activation checkpointing, each layer keeps only its input, 2·s·b·h bytes, plus one layer's full
// activations while it is recomputed. The paper counts 2-byte (fp16/bf16) activations, so the bytes scale
// with the run's activation dtype. Its 5·a·s/h term is the attention scores each layer keeps (softmax
// output 2·a·s²·b, dropout mask a·s²·b, dropout output 2·a·s²·b bytes): fused attention (PyTorch's SDPA
// with flash or memory-efficient kernels, FlashAttention) keeps none of them, and the term drops.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "tracer/format/run_shape.h"

namespace shardscope::sizing {

struct ActivationConfig {
  double seq_len = 0;  // s
  double batch = 0;    // b: sequences per rank per step
  double hidden = 0;   // h
  double heads = 0;    // a
  double layers = 0;   // L
  double bytes_per_element = 2;
  bool checkpointing = false;  // full activation checkpointing
  bool scores_kept = true;     // false: fused attention, which keeps no s² scores
  // > 0: shardscope-train's block (trainer_block_layer_bytes), whose SwiGLU FFN is this wide; 0: the paper's
  // GPT layer.
  double ffn_dim = 0;
};

struct ActivationPrediction {
  double bytes = 0;
  ActivationConfig inputs;  // what the formula was given
  double scale = 1;         // bytes per element / 2: the formula counts 2-byte activations
};

// One layer's activations at 2 bytes per element: s·b·h·(34 + 5·a·s/h), or s·b·h·34 without the scores.
double layer_activation_bytes_16bit(const ActivationConfig& c);

// shardscope-train's block (training/model/transformer.cc), as autograd keeps it: RMSNorm, eager attention
// (the softmax in fp32), SwiGLU, no dropout. With S = s·b·h, F = s·b·ffn_dim, A = a·s²·b elements and e bytes
// an element: e·(10·S + 4·F) + 4·A bytes a layer, and under 2-byte dtypes 8·S + e·A more. The 10·S: each
// RMSNorm's normalized input and output (4), q and k (the contiguous copies the score matmul makes), v, the
// attention output's copy, the residual sum, the block's output; the 4·F: w1's and w3's outputs, SiLU's,
// the gate; 4·A: the fp32 softmax output. Under bf16/fp16 each RMSNorm also keeps its fp32 input (2 × 4·S)
// and the scores' cast back (e·A). What it leaves out: the dropout the paper counts (34 → 32·S at 2 bytes,
// 5 → 2·A), and the paper's 4h-wide GeLU MLP.
double trainer_block_layer_bytes(const ActivationConfig& c);
ActivationPrediction predict_activations(const ActivationConfig& c);

// The formula's element count over `layers` layers, s·b·h·34 + 5·a·s²·b each, in checked int64 arithmetic:
// nullopt when it leaves the range, a shape the doubles above would still price without saying so.
std::optional<int64_t> checked_activation_elements(int64_t seq_len, int64_t batch, int64_t hidden, int64_t heads,
                                                   int64_t layers);

// The SwiGLU FFN's intermediate activations, which the formula above leaves out (it prices a 4h-wide MLP
// inside its 34 and never reads the FFN's width): s·b·ffn_dim elements per layer over `layers` layers, in
// checked int64 arithmetic. Not part of predict_activations (whose value `shardscope memory` and the report
// print): a bound the trainer adds before it allocates, so that an absurd --ffn-dim is refused up front.
std::optional<int64_t> checked_ffn_activation_elements(int64_t seq_len, int64_t batch, int64_t ffn_dim, int64_t layers);

// From run_config: model.{seq_len, dim, heads, layers}, batch_size, activation_checkpointing and
// param_dtype (the dtype the blocks compute in); nullopt with what is missing.
struct MemoryNa;
std::optional<ActivationConfig> activation_config_from_run(const trace::RunShape& run, MemoryNa& why_not);

}  // namespace shardscope::sizing
