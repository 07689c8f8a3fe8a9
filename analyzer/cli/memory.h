// `shardscope memory (--preset NAME | --params N) --world N [--stage 0|1|2|3] [--dtype ...] [--precision
// zero|fsdp] [--backward-prefetch none|pre|post] [--hybrid-shard R] [--largest-unit N --root-unit N]
// [--offload] [--seq-len S --micro-batch B --hidden H --layers L --heads A] [--checkpointing] [--attention
// eager|fused] [--device H100|H200|B200|MI300X|BYTES]`: the ZeRO memory calculator, through the same model
// (metrics/memory_model.h) the report predicts a trace's memory with, and the activation formula
// (sizing/activations.h): whether each strategy fits the device.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

namespace shardscope::cli {

struct MemoryArgs {
  std::string preset;            // a trainer preset (tiny, small, 1b, 8b), or empty
  std::optional<double> params;  // Ψ
  int world = 1;                 // all ranks
  std::optional<int> stage;      // all four stages when absent
  std::string dtype = "bf16";
  std::string precision = "zero";                 // zero (the ZeRO paper) or fsdp (PyTorch FSDP, shardscope-train)
  std::string backward_prefetch = "pre";          // pre/post: two units gathered under stage 3; none: one
  int hybrid_shard = 0;                           // > 0: HYBRID_SHARD, sharded within nodes of this many ranks
  std::optional<double> largest_unit, root_unit;  // unit sizes, when not from --preset
  bool offload = false;
  // The activation formula's inputs; a preset gives all but the micro-batch (1 unless given).
  std::optional<double> seq_len, micro_batch, hidden, layers, heads;
  bool checkpointing = false;       // full activation checkpointing
  std::string attention = "eager";  // eager: the s² scores kept (the formula as published); fused: none
  std::string device = "H100";      // a data sheet's capacity, or bytes
  std::string format = "text";
};

int memory(const MemoryArgs& a, std::ostream& out, std::ostream& err);

}  // namespace shardscope::cli
