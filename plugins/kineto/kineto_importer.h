// PyTorch profiler (Kineto) Chrome-trace JSON: one file per rank, streamed batch by batch with simdjson.
#pragma once

#include "plugins/api/importer.h"

namespace shardscope::plugins {

class KinetoImporter : public Importer {
 public:
  std::string name() const override { return "kineto"; }
  bool can_read(std::string_view head) const override;
  model::Rank read(Input in) const override;
};

}  // namespace shardscope::plugins
