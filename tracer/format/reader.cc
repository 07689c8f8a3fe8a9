#include "tracer/format/reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

#include <simdjson.h>

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
    if (swallow_ > 0) return --swallow_, true;
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
    if (swallow_ > 0) return --swallow_, true;
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
          return !stop_at_events_;  // the fast walk takes over from here (parse_events)
        }
        return container_value(json::array());
      case State::EventValue: return container_value(json::array());
      case State::Events: return fail_at(pos() - 1, event_label() + " is an array, not an object");
      default: return fail_at(pos() - 1, "unexpected array");
    }
  }
  bool end_object() {
    if (swallow_ > 0) return --swallow_, true;
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
    if (swallow_ > 0) return --swallow_, true;
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
    position = std::size_t(int64_t(position) + shift_);  // a resumed parse counts from its prefix
    if (!prefix_token_.empty()) {
      // The lexer quotes what it read since the last string or number began: in a resumed parse, possibly
      // its prefix, where the whole parse read the text's own token.
      std::string what = ex.what();
      const std::string tag = "last read: '" + prefix_token_;
      if (auto at = what.find(tag); at != std::string::npos) what.replace(at + 12, prefix_token_.size(), real_token_);
      return parse_error_at(position, what);
    }
    return parse_error_at(position, ex.what());
  }
  bool parse_error_at(std::size_t position, const std::string& what) {
    // The lexer counts the end-of-input as one more character read: a position past the last byte means the
    // text simply stopped, i.e. the file was cut off.
    if (position > size_) {
      out_.truncated = Truncation{size_, clean_message(what)};
      return false;
    }
    error_.emplace(error_offset(position, what), clean_message(what));
    return false;
  }

  // --- the fast walk of the events array (FastEvents), through the same checks as the SAX callbacks ---
  // Stop the SAX parse just after the '[' of "traceEvents"; whether it got there.
  void stop_at_events() { stop_at_events_ = true; }
  bool at_events() {
    bool at = stop_at_events_ && state_ == State::Events && !error_ && !out_.truncated;
    stop_at_events_ = false;  // a second "traceEvents" array is the SAX parse's
    return at;
  }
  void begin_event() {
    event_ = Event{};
    has_ph_ = has_ts_ = has_dur_ = false;
  }
  bool field(std::string_view k, const json& v, std::string_view raw_number) {
    key_.assign(k);
    raw_number_.assign(raw_number);
    bool ok = event_field(v);
    raw_number_.clear();
    return ok;
  }
  void set_args(json&& a) { event_.args = std::move(a); }
  // Checks the event and puts it in `batch`, as finish_event would send it.
  bool end_event(std::vector<Event>& batch) {
    if (!check_event()) return false;
    batch.push_back(std::move(event_));
    ++out_.event_count;
    return true;
  }
  struct Mark {
    size_t event_count;
    json shardscope;
  };
  Mark mark() const { return {out_.event_count, out_.shardscope}; }
  // A batch that failed: as if none of it was read, for the SAX parse to read it again (and say why).
  void rewind(Mark&& m) {
    out_.event_count = m.event_count;
    out_.shardscope = std::move(m.shardscope);
    error_.reset();
    key_.clear();
    state_ = State::Events;
  }
  // A batch that parsed: its events go out, and `next` (where the next element starts) is the cursor.
  // Pages are handed back only before `keep` (the batch's start): a resumed parse may quote the text before
  // `next`.
  void deliver(std::vector<Event>& batch, uint64_t next, uint64_t keep) {
    keep_ = keep;
    for (Event& e : batch)
      if (sink_) (*sink_)(std::move(e));
      else
        out_.events.push_back(std::move(e));
    batch.clear();
    cursor_ = base_ + next;
    consume_paused_ = false;
    after_event();
  }
  // The SAX parse goes on from the cursor, fed `prefix` first (whose three callbacks, '{', the key and '[',
  // are the ones already made): positions shift by `shift` to stay the text's.
  // Stops after the first event that ends at or past `stop_after` (none: to the end), keeping the pages it
  // reads meanwhile (the walk counts their lines afterwards).
  // `prefix_token` and `real_token`: the prefix's last token as the lexer quotes it, and the text's.
  void resume(int swallow, int64_t shift, uint64_t stop_after, std::string prefix_token, std::string real_token) {
    prefix_token_ = std::move(prefix_token);
    real_token_ = std::move(real_token);
    swallow_ = swallow;
    shift_ = shift;
    stop_after_ = stop_after;
    consume_paused_ = stop_after != kNoStop;
  }
  // Whether a resumed parse stopped as asked; it then resumes the walk at element_end().
  bool stopped() const {
    return stop_after_ != kNoStop && state_ == State::Events && !error_ && !out_.truncated &&
           element_start_ >= stop_after_;
  }
  uint64_t element_end() const { return element_start_; }
  static constexpr uint64_t kNoStop = UINT64_MAX;

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
  friend class FastEvents;  // sets the common fields directly, as event_field would
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
    if (!check_event()) return false;
    if (sink_) (*sink_)(std::move(event_));
    else
      out_.events.push_back(std::move(event_));
    ++out_.event_count;
    after_event();
    return element_start_ < stop_after_;  // a resumed parse hands back to the fast walk there
  }
  bool check_event() {
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
    return true;
  }
  void after_event() {
    element_start_ = pos();
    if (element_start_ >= next_progress_) {  // every few MB: a loader's progress (and its cancel)
      next_progress_ = element_start_ + kParseProgressBytes;
      parse_progress(element_start_, out_.event_count);
      // Nothing reads the text behind the cursor again: a loader's own buffer gives those pages back.
      if (consume_ && !consume_paused_) discarded_ = discard_pages(discarded_, base_ + std::min(element_start_, keep_));
    }
    state_ = State::Events;
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
  bool stop_at_events_ = false, consume_paused_ = false;
  uint64_t stop_after_ = kNoStop, keep_ = kNoStop;
  std::string prefix_token_, real_token_;  // a resumed parse's (resume)
  int swallow_ = 0;                        // callbacks of a resumed parse's prefix, already made
  int64_t shift_ = 0;                      // text offset minus the resumed parse's position
  const char* discarded_;                  // the pages before it are handed back (consume_ only)
};

namespace od = simdjson::ondemand;

constexpr uint64_t kBatchBytes = 256 << 10;      // about 1,300 events (1 MB held 50 MB more at the peak of an open)
std::atomic<uint64_t> batch_bytes{kBatchBytes};  // tests set it while loaders on other threads read it

// Whether simdjson reads a string as nlohmann's lexer does: the two differ on control characters (raw ones
// are an error for nlohmann) and on lone surrogates (UTF-8 ED A0..ED BF), so a string with either, escaped
// or not, is left to the SAX parse.
bool same_string(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = uint8_t(s[i]);
    if (c < 0x20 || (c == 0xED && i + 1 < s.size() && uint8_t(s[i + 1]) >= 0xA0)) return false;
  }
  return true;
}

bool number_char(char c) { return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'; }

// A number's token as written (the value's raw token may run on into whitespace).
std::string_view number_token(std::string_view raw) {
  size_t n = 0;
  while (n < raw.size() && number_char(raw[n])) ++n;
  return raw.substr(0, n);
}

// A scalar as nlohmann's lexer makes it: an integer token unsigned without a sign, signed with one, any other
// number a double. False where they could differ (an integer past 64 bits is a double to nlohmann).
bool scalar_of(od::value& v, od::json_type t, json& out, std::string_view& token) {
  switch (t) {
    case od::json_type::number: {
      token = number_token(v.raw_json_token());
      if (token.empty()) return false;
      if (token.find_first_of(".eE") == std::string_view::npos) {
        int64_t i = 0;
        uint64_t u = 0;
        if (token[0] == '-') return v.get_int64().get(i) == simdjson::SUCCESS && (out = i, true);
        return v.get_uint64().get(u) == simdjson::SUCCESS && (out = u, true);
      }
      double d = 0;
      return v.get_double().get(d) == simdjson::SUCCESS && std::isfinite(d) && (out = d, true);
    }
    case od::json_type::string: {
      std::string_view sv;
      if (v.get_string().get(sv) != simdjson::SUCCESS || !same_string(sv)) return false;
      out = std::string(sv);
      return true;
    }
    case od::json_type::boolean: {
      bool b = false;
      return v.get_bool().get(b) == simdjson::SUCCESS && (out = b, true);
    }
    case od::json_type::null: {
      bool null = false;
      return v.is_null().get(null) == simdjson::SUCCESS && null && (out = nullptr, true);
    }
    default: return false;
  }
}

// Any value, whole, as nlohmann would build it; `depth` is its own nesting level in the file (the limit's).
bool value_of(od::value v, int depth, json& out) {
  od::json_type t;
  if (v.type().get(t) != simdjson::SUCCESS) return false;
  std::string_view token;
  if (t != od::json_type::object && t != od::json_type::array) return scalar_of(v, t, out, token);
  if (depth > limits().max_depth) return false;
  if (t == od::json_type::array) {
    od::array a;
    if (v.get_array().get(a) != simdjson::SUCCESS) return false;
    out = json::array();
    for (auto e : a) {
      od::value x;
      json j;
      if (e.get(x) != simdjson::SUCCESS || !value_of(x, depth + 1, j)) return false;
      out.push_back(std::move(j));
    }
    return true;
  }
  od::object o;
  if (v.get_object().get(o) != simdjson::SUCCESS) return false;
  out = json::object();
  for (auto f : o) {
    od::field field;
    std::string_view k;
    json j;
    if (std::move(f).get(field) != simdjson::SUCCESS || field.unescaped_key().get(k) != simdjson::SUCCESS ||
        !same_string(k) || !value_of(field.value(), depth + 1, j))
      return false;
    out[std::string(k)] = std::move(j);
  }
  return true;
}

// The "traceEvents" array read with simdjson, a batch of whole events (about a MB of text) at a time, each
// event through the Handler's own checks. What it cannot read exactly as the SAX parse would (an error, a
// control character in a string, a cut file, the end of the array) it hands to the SAX parse, resumed at the
// batch's start as if it had read everything before (same state, same line and column), which reads that
// batch and gives the walk back the next one; so the events, the messages and the offsets are the SAX
// parse's, at simdjson's speed.
class FastEvents {
 public:
  FastEvents(Handler& h, std::string_view text, const char** cursor) : h_(h), text_(text), cursor_(cursor) {}

  // `from`: just after the array's '['.
  void run(uint64_t from) {
    uint64_t b = from;
    bool first = true;
    count_lines(0, b);
    for (;;) {
      uint64_t s = skip_ws(b);
      if (s < text_.size() && text_[s] == ']') return resume(b, first, Handler::kNoStop);  // the rest
      if (!first && (s >= text_.size() || text_[s] != ',')) return resume(b, first, Handler::kNoStop);
      if (!first) s = skip_ws(s + 1);
      uint64_t window = 0;
      const uint64_t cut = batch(s, window);
      if (cut > s) {
        count_lines(b, cut);
        h_.deliver(events_, cut, s);
        b = cut, first = false;
        continue;
      }
      resume(b, first, std::min<uint64_t>(text_.size(), s + window));
      if (!h_.stopped()) return;
      count_lines(b, h_.element_end());
      b = h_.element_end(), first = false;
    }
  }

 private:
  uint64_t skip_ws(uint64_t i) const {
    while (i < text_.size() && (text_[i] == ' ' || text_[i] == '\n' || text_[i] == '\r' || text_[i] == '\t')) ++i;
    return i;
  }
  // Whether the '}' at `i` ends an element: the next non-blank is ',' or ']'.
  bool element_end_at(uint64_t i) const {
    const uint64_t n = skip_ws(i + 1);
    return n < text_.size() && (text_[n] == ',' || text_[n] == ']');
  }
  // The events starting at `s` and ending in its window, parsed into events_: where the last one ends (s: none).
  // The end is guessed (the last '}' before ',' or ']') and proved by the parse; a wrong guess (inside a
  // string) fails it, and the window is then scanned exactly.
  uint64_t batch(uint64_t s, uint64_t& window) {
    for (window = batch_bytes.load(std::memory_order_relaxed);; window *= 2) {
      const uint64_t w = std::min<uint64_t>(text_.size(), s + window);
      uint64_t guess = s;  // just past the guessed end; s: none in the window
      for (uint64_t at = w; at > s;) {
        const void* q = memrchr(text_.data() + s, '}', size_t(at - s));
        if (!q) break;
        at = uint64_t(static_cast<const char*>(q) - text_.data());
        if (element_end_at(at)) guess = at + 1, at = s;
      }
      if (guess > s) {
        if (parse(s, guess)) return guess;
        const uint64_t exact = exact_end(s, w);
        if (exact > s && exact != guess && parse(s, exact)) return exact;
        return s;
      }
      if (w == text_.size()) return s;  // no element ends before the text does: the SAX parse says why
    }
  }
  // The end of the last whole element in [s, w), following strings and nesting: s when none.
  uint64_t exact_end(uint64_t s, uint64_t w) const {
    int depth = 0;
    bool in_string = false;
    uint64_t end = s;
    for (uint64_t i = s; i < w; ++i) {
      const char c = text_[i];
      if (in_string) {
        if (c == '\\') ++i;
        else if (c == '"')
          in_string = false;
      } else if (c == '"') {
        in_string = true;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if ((c == '}' || c == ']') && --depth == 0 && c == '}' && element_end_at(i)) {
        end = i + 1;
      }
    }
    return end;
  }
  bool parse(uint64_t s, uint64_t end) {
    buf_.clear();
    buf_.push_back('[');
    buf_.append(text_.data() + s, size_t(end - s));
    buf_.push_back(']');
    const size_t len = buf_.size();
    buf_.append(simdjson::SIMDJSON_PADDING, '\0');
    Handler::Mark mark = h_.mark();
    od::document doc;
    od::array events;
    bool ok = parser_.iterate(buf_.data(), len, buf_.size()).get(doc) == simdjson::SUCCESS &&
              doc.get_array().get(events) == simdjson::SUCCESS;
    if (ok)
      for (auto e : events) {
        od::object o;
        if (!(ok = e.get_object().get(o) == simdjson::SUCCESS && read_event(o))) break;
      }
    const char* after = nullptr;
    if (ok) ok = doc.current_location().get(after) == simdjson::OUT_OF_BOUNDS;
    if (!ok) {
      events_.clear();
      h_.rewind(std::move(mark));
    }
    return ok;
  }
  bool read_event(od::object& o) {
    constexpr int kEventDepth = 3;  // the top-level object, "traceEvents", the event
    h_.begin_event();
    for (auto f : o) {
      od::field field;
      std::string_view k;
      od::json_type t;
      if (std::move(f).get(field) != simdjson::SUCCESS || field.unescaped_key().get(k) != simdjson::SUCCESS ||
          !same_string(k))
        return false;
      od::value v = field.value();
      if (v.type().get(t) != simdjson::SUCCESS) return false;
      json x;
      std::string_view token;
      if (t == od::json_type::object || t == od::json_type::array) {
        // As the SAX parse: an object "args" is kept, any other container skipped (an array "args" is refused).
        const bool args = k == std::string_view(keys::kArgs);
        if (!value_of(v, kEventDepth + 1, x) || (args && !x.is_object())) return false;
        if (args) h_.set_args(std::move(x));
        continue;
      }
      if (direct(k, v, t)) continue;
      if (!scalar_of(v, t, x, token) || !h_.field(k, x, t == od::json_type::number ? token : "")) return false;
    }
    return h_.end_event(events_);
  }
  // The common fields of the common kinds, set as event_field sets them (anything else, an error included, is
  // left to it): false when not set.
  enum class Key { Ph, Name, Cat, Pid, Tid, Ts, Dur, Other };
  static Key key_of(std::string_view k) {
    using sv = std::string_view;
    switch (k.size()) {  // the keys' lengths
      case 2: return k == sv(keys::kPh) ? Key::Ph : k == sv(keys::kTs) ? Key::Ts : Key::Other;
      case 3:
        return k == sv(keys::kCat)   ? Key::Cat
               : k == sv(keys::kPid) ? Key::Pid
               : k == sv(keys::kTid) ? Key::Tid
               : k == sv(keys::kDur) ? Key::Dur
                                     : Key::Other;
      case 4: return k == sv(keys::kName) ? Key::Name : Key::Other;
      default: return Key::Other;
    }
  }
  bool direct(std::string_view name, od::value& v, od::json_type t) {
    Event& e = h_.event_;
    const Key k = key_of(name);
    if (t == od::json_type::string && (k == Key::Name || k == Key::Cat || k == Key::Ph)) {
      std::string_view sv;
      if (v.get_string().get(sv) != simdjson::SUCCESS || !same_string(sv)) return false;
      if (k == Key::Ph) {
        if (sv.size() != 1) return false;
        e.ph = sv[0], h_.has_ph_ = true;
      } else {
        (k == Key::Name ? e.name : e.cat).assign(sv);
      }
      return true;
    }
    if (t != od::json_type::number) return false;
    const bool time = k == Key::Ts || k == Key::Dur;
    if (!time && k != Key::Pid && k != Key::Tid) return false;
    const std::string_view token = number_token(v.raw_json_token());
    int64_t x = 0;
    if (token.empty() || token.find_first_of(".eE") != std::string_view::npos) {
      if (!time) return false;
      const std::optional<int64_t> ns = parse_us(token);
      double d = 0;
      if (!ns || v.get_double().get(d) != simdjson::SUCCESS || !std::isfinite(d)) return false;  // as nlohmann reads it
      x = *ns;
    } else if (v.get_int64().get(x) != simdjson::SUCCESS || (time && __builtin_mul_overflow(x, int64_t(1000), &x))) {
      return false;
    }
    if (k == Key::Ts) e.ts_ns = x, h_.has_ts_ = true;
    else if (k == Key::Dur)
      e.dur_ns = x, h_.has_dur_ = true;
    else
      (k == Key::Pid ? e.pid : e.tid) = x;
    return true;
  }

  // The SAX parse, from `b` to the end or to the first event ending at or past `stop`: fed first the text that
  // puts the parser where it stood at `b` (inside the array, before its first element or after one), then the
  // blank lines and spaces that put `b` on its line and column.
  void resume(uint64_t b, bool first, uint64_t stop);
  // Where the last string or number before `b` starts: the lexer quotes from there in a message.
  uint64_t last_token(uint64_t b) const;
  void count_lines(uint64_t from, uint64_t to) {
    const char* p = text_.data();
    lines_ += uint64_t(std::count(p + from, p + to, '\n'));
    if (const void* nl = memrchr(p + from, '\n', size_t(to - from)))
      line_start_ = uint64_t(static_cast<const char*>(nl) - p) + 1;
  }

  Handler& h_;
  std::string_view text_;
  const char** cursor_;  // the Handler's
  std::string buf_;
  od::parser parser_;
  std::vector<Event> events_;
  uint64_t lines_ = 0, line_start_ = 0;  // newlines before the walk's position, and where its line starts
};

// A resumed parse's input: `head`, `lines` newlines, `spaces` spaces, then the text from `from`; the cursor
// stays at `from` until the text is reached.
struct ResumeIt {
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;
  static constexpr char kNewline = '\n', kSpace = ' ';
  std::string_view head;
  uint64_t lines, spaces;
  const char* from;
  const char** cursor;
  uint64_t i;
  reference operator*() const {
    if (i < head.size()) return head[i];
    if (i < head.size() + lines) return kNewline;
    if (i < head.size() + lines + spaces) return kSpace;
    return from[i - head.size() - lines - spaces];
  }
  ResumeIt& operator++() {
    if (++i >= head.size() + lines + spaces) *cursor = from + (i - head.size() - lines - spaces);
    return *this;
  }
  ResumeIt operator++(int) {
    ResumeIt t = *this;
    ++*this;
    return t;
  }
  bool operator==(const ResumeIt& o) const { return i == o.i; }
  bool operator!=(const ResumeIt& o) const { return i != o.i; }
};

// How nlohmann's lexer quotes text it read: control characters as <U+XXXX>.
std::string lexer_quote(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (uint8_t(c) > 0x1F) {
      out.push_back(c);
      continue;
    }
    char u[9];
    std::snprintf(u, sizeof u, "<U+%.4X>", unsigned(uint8_t(c)));
    out += u;
  }
  return out;
}

uint64_t FastEvents::last_token(uint64_t b) const {
  // The text before `b` is valid JSON (it was parsed): a number ends in a digit, true/false/null in a letter,
  // a string in an unescaped quote, whose opening quote is the nearest one before it not escaped.
  auto escaped = [&](uint64_t q) {
    uint64_t n = 0;
    while (q > n && text_[q - n - 1] == '\\') ++n;
    return n % 2 == 1;
  };
  for (uint64_t i = b; i > 0; --i) {
    const char c = text_[i - 1];
    if (c == '"' && !escaped(i - 1)) {
      for (uint64_t q = i - 1; q > 0; --q)
        if (text_[q - 1] == '"' && !escaped(q - 1)) return q - 1;
      return 0;
    }
    if (c >= '0' && c <= '9') {
      uint64_t q = i - 1;
      while (q > 0 && number_char(text_[q - 1])) --q;
      return q;
    }
  }
  return 0;
}

void FastEvents::resume(uint64_t b, bool first, uint64_t stop) {
  // Before the first element the parser has read `{"traceEvents":[` (three callbacks); after one, also `{}`
  // (two more, the element's).
  const std::string_view head =
      first ? std::string_view("{\"traceEvents\":[") : std::string_view("{\"traceEvents\":[{}");
  const uint64_t column = b - line_start_, taken = lines_ == 0 ? head.size() : 0;
  const uint64_t spaces = column > taken ? column - taken : 0;
  const uint64_t prefix = head.size() + lines_ + spaces;
  std::string prefix_token = lexer_quote(head.substr(1)) + [&] {
    std::string t;
    for (uint64_t i = 0; i < lines_; ++i) t += "<U+000A>";
    return t + std::string(spaces, ' ');
  }();
  h_.resume(first ? 3 : 5, int64_t(b) - int64_t(prefix), stop, std::move(prefix_token),
            lexer_quote(text_.substr(last_token(b), b - last_token(b))));
  *cursor_ = text_.data() + b;
  const uint64_t total = prefix + (text_.size() - b);
  ResumeIt it{head, lines_, spaces, text_.data() + b, cursor_, 0};
  ResumeIt last{head, lines_, spaces, text_.data() + b, cursor_, total};
  json::sax_parse(it, last, &h_);
}

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

// Proves cheaply that no string is longer than `limit`, in most texts: a quote not after a backslash is a
// string's end or start, never inside one, so a string over `limit` bytes (ended or not) spans a whole aligned
// block of limit / 2 bytes with no such quote. One found early in every block settles it; false: look.
bool no_long_string(std::string_view text, uint64_t limit) {
  const uint64_t block = limit / 2;
  if (block < 64) return false;
  for (uint64_t at = 0; at + block <= text.size(); at += block) {
    const char* p = text.data() + at;
    const char* end = p + block;
    bool plain = false;
    while (!plain && p < end) {
      const char* q = static_cast<const char*>(std::memchr(p, '"', size_t(end - p)));
      if (!q) break;
      plain = q == text.data() || q[-1] != '\\';
      p = q + 1;
    }
    if (!plain) return false;
  }
  return true;
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

void set_events_batch_bytes(size_t bytes) {
  batch_bytes.store(bytes > 0 ? bytes : kBatchBytes, std::memory_order_relaxed);
}

TraceFile parse_trace(std::string_view text, const std::string& name) { return parse_trace(text, name, nullptr); }

TraceFile parse_trace(std::string_view text, const std::string& name, const EventSink& sink) {
  TraceFile out;
  out.name = name;
  out.json_bytes = text.size();
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    throw TraceError(name, 0, text.empty() ? "empty file" : "file holds only whitespace");
  std::optional<LongString> long_string;
  if (!no_long_string(text, limits().max_string_bytes)) long_string = find_long_string(text, limits().max_string_bytes);
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
  // The SAX parse up to the events, the fast walk over them, the SAX parse again for what follows.
  h.stop_at_events();
  json::sax_parse(first, last, &h);
  if (h.at_events()) FastEvents(h, text, &cursor).run(uint64_t(cursor - text.data()));
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
