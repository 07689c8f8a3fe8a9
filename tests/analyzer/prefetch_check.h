// check_prefetch on a trace file in the trainer's format, written from TrainerTraceOptions.
#pragma once

#include "analyzer/metrics/prefetch.h"
#include "plugins/load/load.h"
#include "tests/analyzer/trainer_trace.h"
#include "tests/support/temp_dir.h"

namespace shardscope::test {

inline metrics::RankPrefetch check_prefetch_of(const TrainerTraceOptions& o) {
  TempDir dir;
  auto path = dir.path() / "trace.rank0.json";
  write_trainer_trace(path, o);
  plugins::LoadResult loaded = plugins::load({path});
  return metrics::check_prefetch(loaded.trace.ranks.at(0));
}

}  // namespace shardscope::test
