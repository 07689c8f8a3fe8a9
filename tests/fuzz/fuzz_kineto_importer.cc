// libFuzzer target: the PyTorch profiler (Kineto) importer on arbitrary text, then step matching. Bad input
// must end in trace::TraceError; anything else escaping is a finding. One input in 16 is also
// parsed on two threads in 256-byte chunks: a different outcome (error, events, steps) is a finding too. (Guessed
// batch ends are off by default: they disagreed with the byte scan on corpus/guessed_batch_ends.) Those inputs
// are read a third time from a file through a window of one-page pieces (the loader's way): the same outcome too.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

#include <unistd.h>

#include "model/steps.h"
#include "plugins/common/text_window.h"
#include "plugins/kineto/kineto_importer.h"
#include "tracer/format/error.h"

namespace {

using namespace shardscope;

// What a parse gave, in a few words and numbers; `window`: through it (its text is `text`).
std::string outcome(const std::string& text, const plugins::KinetoParseOptions& o,
                    plugins::TextWindow* window = nullptr) {
  try {
    plugins::TextWindowScope scope(window);
    const char* data = window ? window->data() : text.data();
    model::Rank r = plugins::read_kineto({"fuzz.json", data, text.size(), nullptr, false, std::nullopt}, o);
    std::string s = std::to_string(r.event_count()) + " events, " + std::to_string(r.steps.size()) + " steps, " +
                    std::to_string(r.tracks.size()) + " tracks";
    for (const std::string& w : r.warnings) s += "; " + w;
    return s;
  } catch (const trace::TraceError& e) {
    return e.what();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
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
  } catch (const trace::TraceError&) {}
  if (size % 16 == 3) {
    const plugins::KinetoParseOptions one{.threads = 1, .chunk_bytes = 256, .batch_bytes = 64};
    plugins::KinetoParseOptions two = one;
    two.threads = 2;
    const std::string whole = outcome(text, one);
    if (whole != outcome(text, two)) std::abort();
    // The text as it is, through the window: a gzip magic would make the window inflate what the in-memory
    // reads above took as text (gzip through the window is fuzz_gzip's).
    if (text.size() >= 2 && uint8_t(text[0]) == 0x1f && uint8_t(text[1]) == 0x8b) return 0;
    static const std::string file = "/tmp/fuzz_kineto_window." + std::to_string(getpid()) + ".json";
    std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
    plugins::TextWindow window(file, 4096, 4096);
    if (whole != outcome(text, two, &window)) std::abort();
  }
  return 0;
}
