// `shardscope memory (--preset NAME | --params N) --world N [--stage 0|1|2|3] [--dtype ...] [--offload]`:
// the ZeRO memory calculator of SPEC.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

namespace shardscope::cli {

struct MemoryArgs {
  std::string preset;           // a trainer preset (tiny, small, 1b, 8b), or empty
  std::optional<double> params; // Ψ
  int world = 1;
  std::optional<int> stage;     // all four stages when absent
  std::string dtype = "bf16";
  bool offload = false;
  std::string format = "text";
};

int memory(const MemoryArgs& a, std::ostream& out, std::ostream& err);

}  // namespace shardscope::cli
