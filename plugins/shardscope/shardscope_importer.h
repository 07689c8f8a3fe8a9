// shardscope's own trace files (tracer/format): the trainer's ranges, collectives, counters, run_config.
#pragma once

#include "plugins/api/format.h"
#include "plugins/api/importer.h"

namespace shardscope::plugins {

class ShardscopeImporter : public Importer, public ArgsImporter, public Described {
 public:
  std::string name() const override { return "shardscope"; }
  Format format() const override {
    return {.name = name(), .title = "shardscope traces", .extensions = {".json"}, .lists_events = true};
  }
  bool can_read(std::string_view head) const override;
  model::Rank read(Input in) const override { return read_rank(std::move(in), nullptr); }
  model::Rank read_with_args(Input in, model::EventArgs& args) const override {
    return read_rank(std::move(in), &args);
  }

 private:
  model::Rank read_rank(Input in, model::EventArgs* args) const;
};

}  // namespace shardscope::plugins
