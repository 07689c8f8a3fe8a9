// PyTorch profiler (Kineto) Chrome-trace JSON: one file per rank, parsed batch by batch with simdjson, on
// several threads for one big file (event_chunks.h).
#pragma once

#include "plugins/api/format.h"
#include "plugins/api/importer.h"

namespace shardscope::plugins {

// At most this many threads parse one file: beyond it the one thread that builds the rank is the limit.
inline constexpr unsigned kMaxParseThreads = 16;
// The cores, within kMaxParseThreads.
unsigned default_parse_threads();

struct KinetoParseOptions {
  unsigned threads = 0;            // 0: default_parse_threads()
  size_t chunk_bytes = 2 << 20;    // the text each thread takes at a time (rounded down to batches)
  size_t batch_bytes = 256 << 10;  // events that start in one such block are one simdjson document
  // Off by default: the guessed ends disagreed with the byte scan on an input the fuzzer found
  // (tests/fuzz/corpus/fuzz_kineto_importer/guessed_batch_ends); the scan is the reference until they agree.
  bool guess_batches = false;
};

// The importer's work, with its knobs (tests cut small files into many chunks). The rank does not depend
// on them; the byte of a "not valid JSON" error is its batch's first event, so it depends on batch_bytes.
model::Rank read_kineto(Input in, const KinetoParseOptions& options, model::EventArgs* args = nullptr);

class KinetoImporter : public Importer, public ArgsImporter, public ParallelImporter, public Described {
 public:
  std::string name() const override { return "kineto"; }
  Format format() const override {
    return {.name = name(), .title = "PyTorch profiler (Kineto) JSON", .extensions = {".json"}};
  }
  bool can_read(std::string_view head) const override;
  model::Rank read(Input in) const override { return read_rank(std::move(in), nullptr, 0); }
  model::Rank read_with_args(Input in, model::EventArgs& args) const override {
    return read_rank(std::move(in), &args, 0);
  }
  model::Rank read_parallel(Input in, unsigned threads, model::EventArgs* args) const override {
    return read_rank(std::move(in), args, threads);
  }

 private:
  model::Rank read_rank(Input in, model::EventArgs* args, unsigned threads) const;
};

}  // namespace shardscope::plugins
