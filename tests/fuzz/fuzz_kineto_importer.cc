// libFuzzer target: the PyTorch profiler (Kineto) importer on arbitrary text. Bad input must end in
// trace::TraceError; anything else escaping is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

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
    if (size % 2) (void)imp.read_with_args(std::move(in), args);
    else (void)imp.read(std::move(in));
  } catch (const trace::TraceError&) {
  }
  return 0;
}
