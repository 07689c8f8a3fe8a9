#include "tracer/format/reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "tracer/format/error.h"
#include "tracer/format/keys.h"
#include "tracer/format/limits.h"
#include "tracer/format/parse_progress.h"
#include "tracer/format/serialize.h"

namespace shardscope::trace {
namespace {

using json = nlohmann::json;

// An iterator over the text that publishes how far the parser has read, so that schema errors found in SAX
// callbacks (which carry no position) can still name a byte.
struct TrackedIt {
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;
  const char* p;
  const char** cursor;
  reference operator*() const { return *p; }
  TrackedIt& operator++() {
    *cursor = ++p;
    return *this;
  }
  TrackedIt operator++(int) {
    TrackedIt t = *this;
    ++*this;
    return t;
  }
  bool operator==(const TrackedIt& o) const { return p == o.p; }
  bool operator!=(const TrackedIt& o) const { return p != o.p; }
};

// Builds one JSON value from SAX callbacks (used for the header and for args).
class ValueBuilder {
 public:
  explicit ValueBuilder(json* root) : root_(root) {}
  bool done() const { return started_ && stack_.empty(); }
  void key(std::string& k) { key_ = std::move(k); }
  void value(json v) { place(std::move(v)); }
  void start(json container) { stack_.push_back(place(std::move(container))); }
  void end() { stack_.pop_back(); }

 private:
  json* place(json v) {
    started_ = true;
    if (stack_.empty()) {
      *root_ = std::move(v);
      return root_;
    }
    json* top = stack_.back();
    if (top->is_object()) return &((*top)[key_] = std::move(v));
    top->push_back(std::move(v));
    return &top->back();
  }
  json* root_;
  std::vector<json*> stack_;
  std::string key_;
  bool started_ = false;
};

// What the parser says before quoting a number too large for any integer or double (nlohmann's
// out_of_range.406): the whole number follows, and the error is placed at its end.
constexpr std::string_view kOverflowTag = "number overflow parsing '";

std::string clean_message(const std::string& what) {
  // "[json.exception.parse_error.101] parse error at line 1, column 5: ..." -> "parse error at ..."
  auto close = what.find("] ");
  std::string m = what.rfind("[json.exception.", 0) == 0 && close != std::string::npos ? what.substr(close + 2) : what;
  // The parser quotes the whole token it was reading ("last read: '...'", or an overflowing number): a cut
  // inside a long string, or a 100 MB number, would put megabytes into one line. Its start is enough to
  // recognize it.
  constexpr size_t kExcerpt = 40;
  for (std::string_view tag : {std::string_view("last read: '"), kOverflowTag}) {
    auto at = m.rfind(tag);
    if (at == std::string::npos || m.size() - at - tag.size() <= kExcerpt + 1) continue;
    size_t excerpt = at + tag.size();
    size_t quoted = m.size() - excerpt - (m.back() == '\'' ? 1 : 0);
    m = m.substr(0, excerpt + kExcerpt) + "'... (" + std::to_string(quoted) + " bytes)";
    break;
  }
  return m;
}

// Where a parse error is: the character before `position` (the parser's count of characters read), or for an
// overflowing number, its first digit (the message quotes the whole number, which ends there).
uint64_t error_offset(std::size_t position, const std::string& what) {
  const uint64_t end = position == 0 ? 0 : position - 1;
  const size_t at = what.find(kOverflowTag);
  if (at == std::string::npos) return end;
  const size_t from = at + kOverflowTag.size(), to = what.rfind('\'');
  const uint64_t digits = to != std::string::npos && to >= from ? to - from : 0;
  return digits > 0 && digits <= end + 1 ? end + 1 - digits : end;
}

// Kineto's top-level keys: a file that has one of these before any "shardscope" header is a PyTorch
// profiler trace, which `report` reads through its importer and `inspect` does not.
bool is_kineto_key(const std::string& k) {
  return k == "schemaVersion" || k == "deviceProperties" || k == "distributedInfo" || k == "baseTimeNanoseconds";
}

class Handler {
 public:
  Handler(TraceFile& out, const char* base, size_t size, const char*& cursor, const EventSink* sink)
      : out_(out), base_(base), size_(size), cursor_(cursor), sink_(sink), discarded_(base) {}

  // The text is given up as it is parsed (ConsumedTextScope).
  void consume() { consume_ = true; }

  // --- nlohmann SAX interface ---
  bool null() { return scalar(json(nullptr)); }
  bool boolean(bool v) { return scalar(json(v)); }
  bool number_integer(json::number_integer_t v) { return scalar(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return scalar(json(v)); }
  bool number_float(json::number_float_t v, const std::string& raw) {
    raw_number_ = raw;
    bool ok = scalar(json(v));
    raw_number_.clear();
    return ok;
  }
  bool string(std::string& v) {
    if (v.size() > limits().max_string_bytes) return too_long(v.size());
    return scalar(json(std::move(v)));
  }
  bool binary(json::binary_t&) { return fail_at(pos(), "unexpected binary value"); }

  bool start_object(std::size_t) {
    if (++depth_ > limits().max_depth) return too_deep();
    if (builder_) return builder_->start(json::object()), true;
    if (skip_depth_ > 0) return ++skip_depth_, true;
    switch (state_) {
      case State::Start: state_ = State::Top; return true;
      case State::Events:
        event_ = Event{};
        event_start_ = pos() - 1;
        has_ph_ = has_ts_ = has_dur_ = false;
        state_ = State::InEvent;
        return true;
      case State::TopValue:
      case State::EventValue: return container_value(json::object());
      default: return fail_at(pos() - 1, "unexpected object");
    }
  }
  bool start_array(std::size_t) {
    if (++depth_ > limits().max_depth) return too_deep();
    if (builder_) return builder_->start(json::array()), true;
    if (skip_depth_ > 0) return ++skip_depth_, true;
    switch (state_) {
      case State::Start:
        return fail_at(pos() - 1,
                       "the top level is an array; a shardscope trace is a JSON object with \"traceEvents\" (a bare "
                       "array of events is the Chrome trace's JSON Array Format, which PyTorch's legacy profiler "
                       "writes: `shardscope report` reads it)");
      case State::TopValue:
        if (key_ == keys::kTraceEvents) {
          saw_events_ = true;
          element_start_ = pos();
          state_ = State::Events;
          return true;
        }
        return container_value(json::array());
      case State::EventValue: return container_value(json::array());
      case State::Events: return fail_at(pos() - 1, event_label() + " is an array, not an object");
      default: return fail_at(pos() - 1, "unexpected array");
    }
  }
  bool end_object() {
    --depth_;
    if (builder_) return end_container();
    if (skip_depth_ > 0) return --skip_depth_, after_skip(), true;
    if (state_ == State::InEvent) return finish_event();
    if (state_ == State::Top) return state_ = State::End, true;
    return fail_at(pos() - 1, "unexpected end of object");
  }
  bool end_array() {
    --depth_;
    if (builder_) return end_container();
    if (skip_depth_ > 0) return --skip_depth_, after_skip(), true;
    if (state_ == State::Events) return state_ = State::Top, true;
    return fail_at(pos() - 1, "unexpected end of array");
  }
  bool key(std::string& k) {
    if (k.size() > limits().max_string_bytes) return too_long(k.size());
    if (builder_) return builder_->key(k), true;
    if (skip_depth_ > 0) return true;
    if (state_ == State::Top) {
      key_start_ = pos() - k.size() - 2;  // keys we check have no escapes, so this is exact for them
      if (!header_done_ && is_kineto_key(k))
        return fail_at(key_start_,
                       "not a shardscope trace file: \"" + k +
                           "\" is a PyTorch profiler (Kineto) trace's key and no \"shardscope\" header came before it "
                           "(`shardscope report` reads Kineto traces)");
      key_ = std::move(k);
      state_ = State::TopValue;
      return true;
    }
    if (state_ == State::InEvent) return key_ = std::move(k), state_ = State::EventValue, true;
    return fail_at(pos(), "unexpected key");
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) {
    // The lexer counts the end-of-input as one more character read: a position past the last byte means the
    // text simply stopped, i.e. the file was cut off.
    if (position > size_) {
      out_.truncated = Truncation{size_, clean_message(ex.what())};
      return false;
    }
    error_.emplace(error_offset(position, ex.what()), clean_message(ex.what()));
    return false;
  }

  // --- after parsing ---
  void finish(const std::string& name) {
    if (error_) throw TraceError(name, error_->first, error_->second);
    if (out_.truncated && !header_done_)
      throw TraceError(name, size_, "file cut off before its \"shardscope\" header was complete: nothing to load");
    if (!out_.truncated) {
      if (state_ != State::End) throw TraceError(name, size_, "incomplete JSON");
      if (!saw_events_) throw TraceError(name, size_, "no \"traceEvents\" array");
    }
    if (!header_done_ || !out_.shardscope.is_object())
      throw TraceError(name, size_, "no \"shardscope\" object: not a shardscope trace file");
    const json& v = out_.shardscope[keys::kSchemaVersion];
    if (!v.is_number_integer())
      throw TraceError(name, header_start_, "\"shardscope\".\"schema_version\" is missing or not an integer");
    if (v.get<int64_t>() != keys::kSchemaVersionValue)
      throw TraceError(name, header_start_,
                       "schema_version " + v.dump() + " is not the one this shardscope reads (" +
                           std::to_string(keys::kSchemaVersionValue) + ")");
    // The header fields readers use, with the types they use them as: anything else is refused here, by
    // name, rather than failing later as a type error deep in a report.
    const json& h = out_.shardscope;
    auto bad = [&](const char* key, const char* what) {
      throw TraceError(name, header_start_,
                       std::string("\"shardscope\".\"") + key + "\" is " + h[key].dump().substr(0, 40) + ": " + what);
    };
    auto int_at_least = [&](const char* key, int64_t lo, int64_t hi) {
      if (!h.contains(key)) return;
      const json& x = h[key];
      if (!x.is_number_integer() || (x.is_number_unsigned() && x.get<uint64_t>() > uint64_t(hi)) ||
          x.get<int64_t>() < lo || x.get<int64_t>() > hi)
        bad(key, lo == 0 ? "not an integer from 0 up" : "not an integer from 1 up");
    };
    int_at_least(keys::kRank, 0, INT32_MAX - 1);
    int_at_least(keys::kWorldSize, 1, INT32_MAX);
    int_at_least(keys::kOsPid, 0, INT64_MAX);
    int_at_least(keys::kDroppedRecords, 0, INT64_MAX);
    int_at_least(keys::kDroppedGpuRecords, 0, INT64_MAX);
    if (h.contains(keys::kHost) && !h[keys::kHost].is_string()) bad(keys::kHost, "not a string (the host name)");
  }

 private:
  enum class State { Start, Top, TopValue, Events, InEvent, EventValue, End };
  enum class Capture { None, Header, Args };

  uint64_t pos() const { return uint64_t(cursor_ - base_); }
  std::string event_label() const { return "traceEvents[" + std::to_string(out_.event_count) + "]"; }

  // Offsets name where the problem is: the event's '{' for a bad event, the key for a bad top-level value,
  // the '{' of the header for a bad header, and the first offending character for a syntax error.
  bool fail_at(uint64_t offset, const std::string& what) {
    error_.emplace(offset, what);
    return false;
  }
  bool fail(const std::string& what) {
    // A bad event before any header: most likely another tool's trace, and that is the useful thing to say.
    if (!header_done_)
      return fail_at(event_start_,
                     "no \"shardscope\" header before the events: not a shardscope trace file (" + what + ")");
    return fail_at(event_start_, what);
  }
  bool too_deep() {
    return fail_at(pos() - 1,
                   "objects and arrays nested deeper than " + std::to_string(limits().max_depth) + " levels: refused");
  }
  bool too_long(size_t n) {
    return fail_at(pos() > n ? pos() - n - 1 : 0, "a string of " + std::to_string(n) + " bytes, over the limit of " +
                                                      show_bytes(limits().max_string_bytes) + ": refused");
  }
  // An integer field read as int64: a JSON integer beyond it is out of range, not wrapped.
  static bool fits_int64(const json& v) { return !v.is_number_unsigned() || v.get<uint64_t>() <= uint64_t(INT64_MAX); }

  bool container_value(json container) {
    if (state_ == State::TopValue && key_ == keys::kShardscope && container.is_object())
      return capture(Capture::Header, std::move(container));
    if (state_ == State::EventValue && key_ == keys::kArgs && container.is_object())
      return capture(Capture::Args, std::move(container));
    if (state_ == State::TopValue && key_ == keys::kShardscope)
      return fail_at(key_start_, "\"shardscope\" is not an object");
    if (state_ == State::TopValue && key_ == keys::kTraceEvents)
      return fail_at(key_start_, "\"traceEvents\" is not an array");
    if (state_ == State::EventValue && key_ == keys::kArgs) return fail(event_label() + ".args is not an object");
    skip_depth_ = 1;  // a value we do not use: skip it without building it
    return true;
  }
  bool capture(Capture what, json container) {
    capture_ = what;
    target_ = what == Capture::Header ? &out_.shardscope : &event_.args;
    if (what == Capture::Header) header_start_ = pos() - 1;
    builder_.emplace(target_);
    builder_->start(std::move(container));
    return true;
  }
  bool end_container() {
    builder_->end();
    if (builder_->done()) {
      builder_.reset();
      if (capture_ == Capture::Header) header_done_ = true;
      capture_ = Capture::None;
      after_skip();
    }
    return true;
  }
  void after_skip() {
    if (skip_depth_ == 0 && builder_ == std::nullopt) {
      if (state_ == State::TopValue) state_ = State::Top;
      if (state_ == State::EventValue) state_ = State::InEvent;
    }
  }

  bool scalar(json v) {
    if (builder_) return builder_->value(std::move(v)), true;
    if (skip_depth_ > 0) return true;
    switch (state_) {
      case State::TopValue:
        if (key_ == keys::kTraceEvents) return fail_at(key_start_, "\"traceEvents\" is not an array");
        if (key_ == keys::kShardscope) return fail_at(key_start_, "\"shardscope\" is not an object");
        state_ = State::Top;
        return true;
      case State::EventValue: {
        state_ = State::InEvent;
        return event_field(v);
      }
      case State::Events: return fail_at(element_start_, event_label() + " is not an object");
      case State::Start: return fail_at(0, "the top level is not a JSON object");
      default: return fail_at(pos(), "unexpected value");
    }
  }

  bool event_field(const json& v) {
    const std::string& k = key_;
    if (k == keys::kPh) {
      if (!v.is_string() || v.get_ref<const std::string&>().size() != 1)
        return fail(event_label() + ".ph is not a one-letter string");
      event_.ph = v.get_ref<const std::string&>()[0];
      has_ph_ = true;
    } else if (k == keys::kName || k == keys::kCat) {
      if (!v.is_string()) return fail(event_label() + "." + k + " is not a string");
      (k == keys::kName ? event_.name : event_.cat) = v.get<std::string>();
    } else if (k == keys::kPid || k == keys::kTid) {
      if (!v.is_number_integer()) return fail(event_label() + "." + k + " is not an integer");
      if (!fits_int64(v)) return fail(event_label() + "." + k + " " + v.dump() + " is out of range (past 2^63)");
      (k == keys::kPid ? event_.pid : event_.tid) = v.get<int64_t>();
    } else if (k == keys::kTs || k == keys::kDur) {
      std::optional<int64_t> ns;
      int64_t x = 0;
      if (v.is_number_integer()) {
        // Nanoseconds in int64 reach 9.2e15 µs (292 years): past that the product would wrap.
        if (!fits_int64(v) || __builtin_mul_overflow(v.get<int64_t>(), int64_t(1000), &x))
          return fail(event_label() + "." + k + " " + v.dump() +
                      " µs is out of range (beyond ±9.2e15 µs, 292 years, in nanoseconds)");
        ns = x;
      } else if (v.is_number_float()) {
        ns = parse_us(raw_number_);
        if (!ns)
          return fail(event_label() + "." + k + " " + raw_number_.substr(0, 40) +
                      " µs is out of range (beyond ±9.2e15 µs, 292 years, in nanoseconds)");
      }
      if (!ns) return fail(event_label() + "." + k + " is not a time in microseconds");
      if (k == keys::kTs) event_.ts_ns = *ns, has_ts_ = true;
      else
        event_.dur_ns = *ns, has_dur_ = true;
    } else if (k == keys::kId) {
      if (v.is_string()) event_.id = v.get<std::string>();
      else if (v.is_number())
        event_.id = v.dump();
      else
        return fail(event_label() + ".id is neither a string nor a number");
    } else if (k == keys::kArgs) {
      if (!v.is_null()) return fail(event_label() + ".args is not an object");
    }
    return true;  // other keys ("s", "bp", ...) are implied by ph and not kept
  }

  bool finish_event() {
    if (!has_ph_) return fail(event_label() + " has no \"ph\"");
    if (event_.ph != 'M' && !has_ts_) return fail(event_label() + " (\"" + event_.name + "\") has no \"ts\"");
    if (event_.ph == 'X' && !has_dur_)
      return fail(event_label() + " (\"" + event_.name + "\") is a complete event without \"dur\"");
    if (event_.dur_ns < 0) return fail(event_label() + " (\"" + event_.name + "\") has a negative duration");
    if (int64_t end; __builtin_add_overflow(event_.ts_ns, event_.dur_ns, &end))
      return fail(event_label() + " (\"" + event_.name +
                  "\") ends beyond the nanosecond range (ts + dur past 9.2e15 µs)");
    if (out_.event_count >= limits().max_events)
      return fail(event_label() + ": more than " + std::to_string(limits().max_events) +
                  " events in one file: refused");
    if (event_.ph == 'M' && event_.name == keys::kMetadataPatch && event_.args.is_object() && header_done_)
      out_.shardscope.merge_patch(event_.args);
    if (sink_) (*sink_)(std::move(event_));
    else
      out_.events.push_back(std::move(event_));
    ++out_.event_count;
    element_start_ = pos();
    if (element_start_ >= next_progress_) {  // every few MB: a loader's progress (and its cancel)
      next_progress_ = element_start_ + kParseProgressBytes;
      parse_progress(element_start_, out_.event_count);
      // Nothing reads the text behind the cursor again: a loader's own buffer gives those pages back.
      if (consume_) discarded_ = discard_pages(discarded_, base_ + element_start_);
    }
    state_ = State::Events;
    return true;
  }

  TraceFile& out_;
  const char* base_;
  size_t size_;
  const char*& cursor_;
  const EventSink* sink_;  // nullptr: events kept in out_.events
  std::optional<std::pair<uint64_t, std::string>> error_;
  State state_ = State::Start;
  std::string key_;
  std::string raw_number_;
  int skip_depth_ = 0;
  int depth_ = 0;
  Capture capture_ = Capture::None;
  json* target_ = nullptr;
  std::optional<ValueBuilder> builder_;
  Event event_;
  bool has_ph_ = false, has_ts_ = false, has_dur_ = false;
  bool saw_events_ = false, header_done_ = false;
  uint64_t header_start_ = 0, key_start_ = 0, event_start_ = 0, element_start_ = 0;
  uint64_t next_progress_ = kParseProgressBytes;
  bool consume_ = false;
  const char* discarded_;  // the pages before it are handed back (consume_ only)
};

// A string longer than `limit`: where it starts (its '"'), how long it is, whether it ends.
struct LongString {
  uint64_t start = 0, length = 0;
  bool terminated = false;
};

// The parser reads a whole string before any callback sees it (at parsing speed, keeping two copies), so a
// huge one, above all one that never ends, is looked for first, at memchr speed. Outside strings JSON has
// no quotes, so unescaped quotes alternate between opening and closing one.
std::optional<LongString> find_long_string(std::string_view text, uint64_t limit) {
  const char* base = text.data();
  const char* end = base + text.size();
  const char* p = base;
  const char* open = nullptr;
  while (p < end) {
    const char* q = static_cast<const char*>(std::memchr(p, '"', size_t(end - p)));
    if (!q) break;
    p = q + 1;
    if (!open) {
      open = q;
      continue;
    }
    const char* b = q;
    while (b > open + 1 && b[-1] == '\\') --b;
    if (((q - b) & 1) != 0) continue;  // an escaped quote
    if (uint64_t(q - open - 1) > limit) return LongString{uint64_t(open - base), uint64_t(q - open - 1), true};
    open = nullptr;
  }
  if (open && uint64_t(end - open - 1) > limit)
    return LongString{uint64_t(open - base), uint64_t(end - open - 1), false};
  return std::nullopt;
}

// The events the text can hold, at most: its "ph" keys. Reserving them stops the event vector from doubling
// past the file: one just over a power of two held twice its events, and three times while they moved (the
// H100 trainer's 132 k-event ranks: 60 MB each instead of 20). Capped at what the smallest event
// ({"ph":"M"},) could fill the text with, so a forged file reserves no more than a real one of its size needs.
// Found by `ph"` (memchr on 'p', rarer than '"'), not memmem: the sanitizers' memmem checks all the text left
// on each call, which made this quadratic under TSan (minutes on the 8 MB of a tracer test's file).
size_t events_in(std::string_view text) {
  constexpr std::string_view kPh = "ph\"";
  size_t n = 0;
  for (size_t at = text.find(kPh); at != std::string_view::npos; at = text.find(kPh, at + kPh.size()))
    n += at > 0 && text[at - 1] == '"';
  return std::min<uint64_t>({n, text.size() / 11, limits().max_events});
}

}  // namespace

TraceFile parse_trace(std::string_view text, const std::string& name) { return parse_trace(text, name, nullptr); }

TraceFile parse_trace(std::string_view text, const std::string& name, const EventSink& sink) {
  TraceFile out;
  out.name = name;
  out.json_bytes = text.size();
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    throw TraceError(name, 0, text.empty() ? "empty file" : "file holds only whitespace");
  std::optional<LongString> long_string = find_long_string(text, limits().max_string_bytes);
  if (long_string && long_string->terminated)
    throw TraceError(name, long_string->start,
                     "a string of " + std::to_string(long_string->length) + " bytes, over the limit of " +
                         show_bytes(limits().max_string_bytes) + ": refused");
  // One that never ends is where the file was cut: what comes before it loads as a cut file does.
  if (long_string) text = text.substr(0, long_string->start);
  if (!sink) out.events.reserve(events_in(text));
  const char* cursor = text.data();
  Handler h(out, text.data(), text.size(), cursor, sink ? &sink : nullptr);
  if (text_consumed(text)) h.consume();
  TrackedIt first{text.data(), &cursor};
  TrackedIt last{text.data() + text.size(), &cursor};
  json::sax_parse(first, last, &h);
  h.finish(name);
  parse_progress(text.size(),
                 out.event_count);  // the whole text read; a cancel stops the load before the model is built
  if (long_string && out.truncated)
    out.truncated->detail = "inside a string that starts here and runs " + std::to_string(long_string->length) +
                            " bytes to the end of the file";
  return out;
}

int open_regular(const std::filesystem::path& path, uint64_t* size) {
  const std::string name = path.string();
  // stat before open: opening a FIFO for reading blocks until a writer comes, and a device such as
  // /dev/zero never ends. Only a regular file is a trace.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw TraceError(name, 0, std::string("cannot open: ") + std::strerror(errno));
  auto kind = [](mode_t m) -> std::string {
    if (S_ISDIR(m)) return "is a directory, not a trace file";
    if (S_ISFIFO(m))
      return "is a FIFO (named pipe), not a regular file: refused (it may never end; copy it to a file first)";
    if (S_ISCHR(m) || S_ISBLK(m)) return "is a device, not a regular file: refused";
    if (S_ISSOCK(m)) return "is a socket, not a regular file: refused";
    return "not a regular file";
  };
  if (!S_ISREG(st.st_mode)) throw TraceError(name, 0, kind(st.st_mode));
  // O_NONBLOCK: should the path be swapped for a FIFO between stat and open, the open still returns.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw TraceError(name, 0, std::string("cannot open: ") + std::strerror(errno));
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw TraceError(name, 0, kind(st.st_mode));
  }
  if (uint64_t(st.st_size) > max_text_bytes()) {
    ::close(fd);
    throw TraceError(name, max_text_bytes(),
                     "the file is " + show_bytes(uint64_t(st.st_size)) + ", over the limit of " +
                         show_bytes(max_text_bytes()) + " of JSON text (--max-trace-bytes raises it)");
  }
  if (size) *size = uint64_t(st.st_size);
  return fd;
}

std::optional<uint64_t> inflate_gzip(std::string_view raw, const std::string& name, std::string& out,
                                     size_t size_hint) {
  const uint64_t limit = max_text_bytes();
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) throw TraceError(name, 0, "cannot start zlib");
  struct End {
    z_stream* z;
    ~End() { inflateEnd(z); }
  } end{&zs};
  // The buffer grows with what actually inflates; the trailer's size (which a cut or forged file makes up)
  // is at most a first guess, and nothing is ever allocated past the limit.
  const uint64_t cap = limit + 1;  // one byte over: room to see that the text does not stop at the limit
  out.clear();
  out.resize(size_t(std::min<uint64_t>(cap, std::max<uint64_t>({size_hint, raw.size() * 4, 1 << 16}))));
  uint64_t in_pos = 0, out_pos = 0;
  std::optional<uint64_t> cut;
  for (;;) {
    if (out_pos == out.size()) {
      if (out.size() >= cap) break;
      out.resize(size_t(std::min<uint64_t>(cap, uint64_t(out.size()) * 2)));
    }
    // avail_in and avail_out are 32-bit: feed and drain at most 1 GiB a call.
    size_t in_chunk = size_t(std::min<uint64_t>(raw.size() - in_pos, 1u << 30));
    size_t out_chunk = size_t(std::min<uint64_t>(out.size() - out_pos, 1u << 30));
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data() + in_pos));
    zs.avail_in = uInt(in_chunk);
    zs.next_out = reinterpret_cast<Bytef*>(out.data() + out_pos);
    zs.avail_out = uInt(out_chunk);
    int rc = inflate(&zs, Z_NO_FLUSH);
    in_pos += in_chunk - zs.avail_in;
    out_pos += out_chunk - zs.avail_out;
    if (rc == Z_STREAM_END) {
      if (in_pos == raw.size()) break;
      inflateReset(&zs);  // another gzip member follows
      continue;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR)
      throw TraceError(name, in_pos,
                       "corrupt gzip data: " + std::string(zs.msg ? zs.msg : "error " + std::to_string(rc)));
    // All input taken and room left, yet no end of stream: the file was cut short. Keep what inflated.
    if (in_pos == raw.size() && zs.avail_out > 0) {
      cut = in_pos;
      break;
    }
  }
  if (out_pos > limit)
    throw TraceError(name, in_pos,
                     "the gzip data inflates to more than " + show_bytes(limit) +
                         " of JSON text, the limit (--max-trace-bytes raises it): refused");
  out.resize(size_t(out_pos));
  return cut;
}

std::string read_file_text(const std::filesystem::path& path, bool* was_gzip) {
  const std::string name = path.string();
  uint64_t size = 0;
  int fd = open_regular(path, &size);
  std::string raw(size_t(size), '\0');
  size_t got = 0;
  while (got < raw.size()) {
    ssize_t n = ::read(fd, raw.data() + got, raw.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      throw TraceError(name, got, std::string("read error: ") + std::strerror(err));
    }
    if (n == 0) break;  // the file shrank while we read it
    got += size_t(n);
  }
  ::close(fd);
  raw.resize(got);
  bool gz = raw.size() >= 2 && uint8_t(raw[0]) == 0x1f && uint8_t(raw[1]) == 0x8b;
  if (was_gzip) *was_gzip = gz;
  if (!gz) return raw;
  std::string text;
  inflate_gzip(raw, name, text);
  return text;
}

TraceFile read_trace(const std::filesystem::path& path) {
  bool gz = false;
  std::string text = read_file_text(path, &gz);
  TraceFile f = parse_trace(text, path.string());
  f.gzip = gz;
  return f;
}

}  // namespace shardscope::trace
