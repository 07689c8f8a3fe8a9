// Why a figure of the analysis is missing: a code the renderers word (report/sentences.h), so the analysis
// makes no sentences and tests compare codes, not text.
#pragma once

#include <cstdint>

namespace shardscope::analysis {

enum class Na : uint8_t {
  None,
  NoDeviceEvents,             // the rank has no device events (no kernels, copies or collectives)
  NoSteps,                    // no step ranges (ProfilerStep#N, the trainer's "step", --step-pattern)
  NoDeviceEventsInSteps,      // steps, but no device events in them
  NoCommunication,            // an overlap share of a window with no communication
  NoCommunicationInAnySteps,  // the all-steps overlap share, with no communication in any step
  EmptyWindow,                // a share of an empty window
  KindNotInRun,               // diff: this collective kind does not occur in this run
  UnitNotChecked,             // diff: the prefetch check found no backward all-gather of this unit
  NoBusBandwidth,             // diff: no run of the side has this kind's bus bandwidth (no bytes, or no time)
  NoMemoryMeasured,           // diff: no run of the side measured memory (no allocator events or counter)
};

}  // namespace shardscope::analysis
