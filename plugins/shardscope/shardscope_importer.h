// shardscope's own trace files (tracer/format): the trainer's ranges, collectives, counters, run_config.
#pragma once

#include "plugins/api/importer.h"

namespace shardscope::plugins {

class ShardscopeImporter : public Importer, public ArgsImporter {
 public:
  std::string name() const override { return "shardscope"; }
  bool can_read(std::string_view head) const override;
  model::Rank read(Input in) const override { return read_rank(std::move(in), nullptr); }
  model::Rank read_with_args(Input in, model::EventArgs& args) const override {
    return read_rank(std::move(in), &args);
  }

 private:
  model::Rank read_rank(Input in, model::EventArgs* args) const;
};

}  // namespace shardscope::plugins
