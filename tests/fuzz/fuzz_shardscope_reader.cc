// libFuzzer target: the shardscope trace reader and importer on arbitrary JSON text (the bulk path of
// `report` and `inspect`). Bad input must end in trace::TraceError; anything else escaping is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "plugins/shardscope/shardscope_importer.h"
#include "tracer/format/error.h"
#include "tracer/format/reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shardscope;
  std::string text(reinterpret_cast<const char*>(data), size);
  // Small batches for two inputs in three, so that batch ends, and the SAX parse resumed there, meet the input.
  trace::set_events_batch_bytes(size % 3 == 0 ? 0 : size % 3 == 1 ? 64 : 700);
  try {
    trace::TraceFile f = trace::parse_trace(text, "fuzz.json");
    (void)f.shardscope.dump();  // what `inspect --format json` prints: the header must be printable
  } catch (const trace::TraceError&) {}
  plugins::ShardscopeImporter imp;
  if (!imp.can_read(text)) return 0;
  try {
    plugins::Input in{"fuzz.json", text.data(), text.size(), nullptr, false, std::nullopt};
    model::EventArgs args;  // half the inputs also keep args (the viewer's path)
    if (size % 2) (void)imp.read_with_args(std::move(in), args);
    else
      (void)imp.read(std::move(in));
  } catch (const trace::TraceError&) {}
  return 0;
}
