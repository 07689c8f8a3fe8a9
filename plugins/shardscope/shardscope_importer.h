// shardscope's own trace files (tracer/format): the trainer's ranges, collectives, counters, run_config.
#pragma once

#include "plugins/api/importer.h"

namespace shardscope::plugins {

class ShardscopeImporter : public Importer {
 public:
  std::string name() const override { return "shardscope"; }
  bool can_read(std::string_view head) const override;
  model::Rank read(Input in) const override;
};

}  // namespace shardscope::plugins
