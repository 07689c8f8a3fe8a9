// libFuzzer target: the PyTorch profiler (Kineto) importer on arbitrary text, then step matching. Bad input
// must end in trace::TraceError; anything else escaping is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "model/steps.h"
#include "plugins/kineto/kineto_importer.h"
#include "tracer/format/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shardscope;
  std::string text(reinterpret_cast<const char*>(data), size);
  plugins::KinetoImporter imp;
  try {
    plugins::Input in{"fuzz.json", text.data(), text.size(), nullptr, false, std::nullopt};
    // Half the inputs also keep args (the viewer's path: every arg's value read generically).
    model::EventArgs args;
    model::Rank rank = size % 2 ? imp.read_with_args(std::move(in), args) : imp.read(std::move(in));
    // Then what the loader does with a rank that has no steps of its own: its range names matched against
    // the default step pattern (a backtracking matcher once overflowed the stack on a long name here).
    static const model::StepPattern kPattern;
    if (rank.steps.empty()) (void)model::steps_matching(rank, kPattern);
  } catch (const trace::TraceError&) {
  }
  return 0;
}
