// The communication kernels that are not NCCL's, by library: one table (comm_kernels.cc), one row a library
// and pattern, that classify.h's other_collective_kernel reads. NCCL's own kernels ("nccl...",
// "...ncclKernel...") are HTA's rule and stay in classify.cc.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "model/event.h"

namespace shardscope::model {

// A kernel name holding `scope` (anywhere; "" for any name) and, in what follows it before its parameter list
// (the function's own qualified name and template arguments), `needle` ("" for any) is communication of
// `kind`; with no scope, `needle` anywhere. Kind None marks a library's kernel that is no communication
// (DeepEP's layout kernel), which ends the search. The first row that matches decides.
struct CommKernelRule {
  std::string_view library;  // who writes these kernels, for the docs and tests
  std::string_view scope;
  std::string_view needle;
  CollectiveKind kind;
};

std::span<const CommKernelRule> comm_kernel_rules();

// The first rule that matches `name`, or none.
std::optional<CommKernelRule> match_comm_kernel(std::string_view name);

}  // namespace shardscope::model
