// Progress inside one file's parse, for a loader that shows it (the viewer's "reading rank3.json.gz — 412 /
// 980 MB"). Parsers call parse_progress() every few MB of text; the hook installed on the calling thread
// (ParseProgressScope) receives it. A hook may throw to stop the parse (a cancelled load): parsers hold only
// RAII state, so the exception unwinds them cleanly. Thread-local so that the Importer interface (and with it
// the plugin ABI) does not change; an importer that parses on worker threads reports from its consuming thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>

namespace shardscope::trace {

// Bytes of (inflated) text parsed so far, and events read so far, in the file being parsed on this thread.
using ParseHook = std::function<void(uint64_t text_bytes, uint64_t events)>;

// How much text a parser reads between two calls: coarse enough to cost nothing next to the parse.
inline constexpr uint64_t kParseProgressBytes = 4u << 20;

// Installs `hook` on this thread for its lifetime (nullptr: none); restores the previous one after.
class ParseProgressScope {
 public:
  explicit ParseProgressScope(const ParseHook* hook);
  ~ParseProgressScope();
  ParseProgressScope(const ParseProgressScope&) = delete;
  ParseProgressScope& operator=(const ParseProgressScope&) = delete;

 private:
  const ParseHook* previous_;
};

// Calls this thread's hook, if any (what it throws propagates).
void parse_progress(uint64_t text_bytes, uint64_t events);

// A text its owner gives up as it is parsed: while the scope lives, a parser on this thread reading it (or a
// prefix of it) may hand the pages behind its cursor back to the system (discard_pages), so the text's memory
// falls while the model's grows. For the loader's own buffer, which nothing reads after the parse (a second
// attempt reads the file again); never for a caller's string. Thread-local like the hook, for the same reason.
class ConsumedTextScope {
 public:
  ConsumedTextScope(const char* data, size_t size);
  ~ConsumedTextScope();
  ConsumedTextScope(const ConsumedTextScope&) = delete;
  ConsumedTextScope& operator=(const ConsumedTextScope&) = delete;

 private:
  std::string_view previous_;
};

// Whether `text` lies within the text this thread's scope gives up.
bool text_consumed(std::string_view text);

// Hands the whole pages inside [from, to) back to the system (they then read as zeros) and returns where the
// next call should start: `to` rounded down to a page. Only for a text that text_consumed() gives up.
const char* discard_pages(const char* from, const char* to);

}  // namespace shardscope::trace
