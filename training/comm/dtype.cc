// The element types collectives move, by the names the command line uses.
#include <stdexcept>
#include <string>

#include "training/comm/group.h"

namespace shardscope::train {

const char* dtype_name(DType d) { return d == DType::F32 ? "fp32" : "bf16"; }

DType parse_dtype(const std::string& s) {
  if (s == "fp32") return DType::F32;
  if (s == "bf16") return DType::BF16;
  throw std::invalid_argument("unknown dtype '" + s + "' (fp32, bf16)");
}

}  // namespace shardscope::train
