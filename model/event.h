// One event of the in-memory model: 64 bytes, names interned, times in integer nanoseconds. The viewer
// draws ten-million-event traces from these, so nothing here may grow without a reason.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>

#include "model/strings.h"

namespace shardscope::model {

// SPEC's interval classes. Host marks ranges that are not device activity (CPU ops, the trainer's phase
// ranges on a GPU run); Other is device activity of no SPEC class (HTA's "OTHER": a kernel whose name
// contains "Memcpy" in the middle, say): it makes the device busy but is neither compute nor communication.
enum class IntervalClass : uint8_t { Host, Compute, Communication, Memory, Sync, Other };

enum class CollectiveKind : uint8_t {
  None,
  AllGather,
  ReduceScatter,
  AllReduce,
  Broadcast,
  SendRecv,
  AllToAll,
  Reduce,
  Barrier,
  Unknown,
  // An expert-parallel all-to-all's two halves (DeepEP, pplx-kernels): tokens out to their experts' ranks,
  // and the experts' outputs back. After Unknown, so that the older kinds keep the numbers summaries hold.
  AllToAllDispatch,
  AllToAllCombine,
};
inline constexpr CollectiveKind kLastCollectiveKind = CollectiveKind::AllToAllCombine;

std::string_view to_string(IntervalClass c);
std::string_view to_string(CollectiveKind k);  // SPEC's names: "all_gather", ...

inline constexpr int64_t kUnknown = std::numeric_limits<int64_t>::min();
inline constexpr uint32_t kNoSeq = std::numeric_limits<uint32_t>::max();

enum EventFlags : uint8_t {
  // Kineto: a device event whose launch is not among the CPU events HTA keeps (HTA's step filter drops it
  // from its whole-trace numbers; so does our HTA-compatible breakdown).
  kOutsideHtaWindow = 1 << 0,
  // The event is a counter sample / instant; dur_ns is 0.
  kInstant = 1 << 1,
};

struct Event {
  int64_t ts_ns = 0;
  int64_t dur_ns = 0;
  int64_t bytes = kUnknown;      // collective payload as nccl-tests counts it, memcpy bytes
  int64_t issued_ns = kUnknown;  // when the host issued it: the kernel's launch call, the trainer's issued_ns
  StringId name = 0;
  StringId cat = 0;
  int32_t unit = -1;       // FSDP unit
  int32_t group_size = 0;  // ranks in the collective's group, 0 unknown
  int32_t step = -1;       // index into Rank::steps of the step that issued it, -1 none
  // A collective's place in its process group's sequence (PyTorch's "Seq", the trainer's issue count), the
  // instance every rank of the group shares; kNoSeq when the trace does not say (instances then pair by
  // position). With the group's name (interned, 0 none) it names the instance across ranks.
  uint32_t seq = kNoSeq;
  StringId group = 0;
  IntervalClass cls = IntervalClass::Host;
  CollectiveKind coll = CollectiveKind::None;
  char ph = 'X';
  uint8_t flags = 0;

  int64_t end_ns() const { return ts_ns + dur_ns; }
  // When the host asked for it (a collective's issue, a kernel's launch), else its start.
  int64_t issued_or_start_ns() const { return issued_ns != kUnknown ? issued_ns : ts_ns; }
  bool is_device() const { return cls != IntervalClass::Host; }
};
static_assert(sizeof(Event) <= 64, "the model's event must stay compact");

}  // namespace shardscope::model
