// Training data, addressed by (step, global sample index) so that any split of a global batch across ranks
// sees exactly the samples a single rank would, and a resumed run sees what an uninterrupted one did.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>

namespace shardscope::train {

class DataSource {
 public:
  virtual ~DataSource() = default;
  // Samples [first, first + count) of step `step`: tokens and next-token targets, each [count, seq_len].
  virtual void batch(int64_t step, int64_t first, int64_t count, torch::Tensor& tokens, torch::Tensor& targets) = 0;
};

// "synthetic": learnable arithmetic sequences; otherwise a text file read as bytes (vocab must be >= 256).
// Throws std::invalid_argument naming the problem (missing file, file shorter than a sample, small vocab).
std::unique_ptr<DataSource> make_data(const std::string& spec, int64_t vocab, int64_t seq_len, uint64_t seed);

}  // namespace shardscope::train
