// An event's args as the details panel lists them: each key with its value as text, in the trace's order
// (a kernel's grid and block, a collective's in_msg_nelems, Kineto's "External id", a range's payload).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/args.h"
#include "model/trace.h"

namespace shardscope::viewer {

struct ArgRow {
  std::string key, value;
};

// Values longer than `max_chars` (a CPU op's "Input Dims" of a hundred tensors) are cut and end in "…".
inline constexpr size_t kArgValueChars = 240;
std::string arg_text(const model::Rank& rank, const model::ArgValue& v, size_t max_chars = kArgValueChars);
// None when `args` is null (the run was loaded without args) or the event has none.
std::vector<ArgRow> arg_rows(const model::Rank& rank, const model::EventArgs* args, uint32_t track, uint32_t index,
                             size_t max_chars = kArgValueChars);

}  // namespace shardscope::viewer
