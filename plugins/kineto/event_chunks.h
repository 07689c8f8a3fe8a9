// One "traceEvents" array parsed on several threads. The text is cut into regions of chunk_bytes; a
// chunk is the events that start in one region. A worker guesses where its region's first event starts
// (the first "}," + "{" at or after the region's start) and scans and parses from there; the consumer
// takes the chunks in file order and keeps a chunk only when the chunk before it stopped exactly at that
// guess, otherwise (a guess inside a string, say) it scans the chunk again from the true start. So the
// events, their order, the batches and the errors are the same for any thread count.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "plugins/kineto/json_scan.h"
#include "plugins/kineto/kineto_fields.h"

namespace shardscope::plugins {

struct ChunkOptions {
  unsigned threads = 1;
  // A multiple of batch_bytes, so that the batches (events that start in one batch_bytes block of the
  // file, parsed as one simdjson document) do not depend on the chunks.
  size_t chunk_bytes = 2 << 20;
  size_t batch_bytes = 256 << 10;
  // A batch's end guessed and proved by its parse (no byte scan over it); false: scanned event by event.
  bool guess_batches = false;  // KinetoParseOptions::guess_batches
};

class TextWindow;

// The text of the whole file, for byte offsets in messages.
struct ChunkText {
  const char* begin;
  const char* end;
  const std::string& name;
  std::string_view array = "traceEvents";  // how messages name the events array ("array": a bare one)
  // Set: the text is read through this window (begin its first byte), as far as the parse has gone, and the
  // text behind the parse is given back to it; `end` is where the file ends.
  TextWindow* window = nullptr;
};

// Called with each parsed event of a phase the importer reads (phase_read), in file order, with its kept
// args. False: its time is out of range (the error is raised after the scan, as the one-thread parse did).
using AddEvent = std::function<bool(const Fields&, std::span<const RawArg>)>;

// Parses the array whose '[' is just before `begin`; `events` counts the file's whole events (for messages),
// `skipped` those of other phases. Structural errors are thrown at once; the first parse error (or refused
// event) is left in `pending`, and no event is passed on after it.
ArrayEnd parse_event_array(const ChunkText& text, const char* begin, const ChunkOptions& options, bool keep_args,
                           size_t& events, size_t& skipped, const AddEvent& add, std::exception_ptr& pending);

}  // namespace shardscope::plugins
