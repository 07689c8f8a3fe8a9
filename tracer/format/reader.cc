#include "tracer/format/reader.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "tracer/format/error.h"
#include "tracer/format/keys.h"
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

std::string clean_message(const std::string& what) {
  // "[json.exception.parse_error.101] parse error at line 1, column 5: ..." -> "parse error at ..."
  auto close = what.find("] ");
  return what.rfind("[json.exception.", 0) == 0 && close != std::string::npos ? what.substr(close + 2) : what;
}

class Handler {
 public:
  Handler(TraceFile& out, const char* base, size_t size, const char*& cursor)
      : out_(out), base_(base), size_(size), cursor_(cursor) {}

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
  bool string(std::string& v) { return scalar(json(std::move(v))); }
  bool binary(json::binary_t&) { return fail_at(pos(), "unexpected binary value"); }

  bool start_object(std::size_t) {
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
    if (builder_) return builder_->start(json::array()), true;
    if (skip_depth_ > 0) return ++skip_depth_, true;
    switch (state_) {
      case State::Start: return fail_at(pos() - 1, "the top level is an array; a shardscope trace is a JSON object with \"traceEvents\"");
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
    if (builder_) return end_container();
    if (skip_depth_ > 0) return --skip_depth_, after_skip(), true;
    if (state_ == State::InEvent) return finish_event();
    if (state_ == State::Top) return state_ = State::End, true;
    return fail_at(pos() - 1, "unexpected end of object");
  }
  bool end_array() {
    if (builder_) return end_container();
    if (skip_depth_ > 0) return --skip_depth_, after_skip(), true;
    if (state_ == State::Events) return state_ = State::Top, true;
    return fail_at(pos() - 1, "unexpected end of array");
  }
  bool key(std::string& k) {
    if (builder_) return builder_->key(k), true;
    if (skip_depth_ > 0) return true;
    if (state_ == State::Top) {
      key_start_ = pos() - k.size() - 2;  // keys we check have no escapes, so this is exact for them
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
    error_.emplace(position == 0 ? 0 : position - 1, clean_message(ex.what()));
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
      throw TraceError(name, header_start_, "schema_version " + v.dump() + " is not the one this shardscope reads (" +
                                              std::to_string(keys::kSchemaVersionValue) + ")");
  }

 private:
  enum class State { Start, Top, TopValue, Events, InEvent, EventValue, End };
  enum class Capture { None, Header, Args };

  uint64_t pos() const { return uint64_t(cursor_ - base_); }
  std::string event_label() const { return "traceEvents[" + std::to_string(out_.events.size()) + "]"; }

  // Offsets name where the problem is: the event's '{' for a bad event, the key for a bad top-level value,
  // the '{' of the header for a bad header, and the first offending character for a syntax error.
  bool fail_at(uint64_t offset, const std::string& what) {
    error_.emplace(offset, what);
    return false;
  }
  bool fail(const std::string& what) { return fail_at(event_start_, what); }

  bool container_value(json container) {
    if (state_ == State::TopValue && key_ == keys::kShardscope && container.is_object()) return capture(Capture::Header, std::move(container));
    if (state_ == State::EventValue && key_ == keys::kArgs && container.is_object()) return capture(Capture::Args, std::move(container));
    if (state_ == State::TopValue && key_ == keys::kShardscope) return fail_at(key_start_, "\"shardscope\" is not an object");
    if (state_ == State::TopValue && key_ == keys::kTraceEvents) return fail_at(key_start_, "\"traceEvents\" is not an array");
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
      if (!v.is_string() || v.get_ref<const std::string&>().size() != 1) return fail(event_label() + ".ph is not a one-letter string");
      event_.ph = v.get_ref<const std::string&>()[0];
      has_ph_ = true;
    } else if (k == keys::kName || k == keys::kCat) {
      if (!v.is_string()) return fail(event_label() + "." + k + " is not a string");
      (k == keys::kName ? event_.name : event_.cat) = v.get<std::string>();
    } else if (k == keys::kPid || k == keys::kTid) {
      if (!v.is_number_integer()) return fail(event_label() + "." + k + " is not an integer");
      (k == keys::kPid ? event_.pid : event_.tid) = v.get<int64_t>();
    } else if (k == keys::kTs || k == keys::kDur) {
      std::optional<int64_t> ns;
      if (v.is_number_integer()) ns = v.get<int64_t>() * 1000;
      else if (v.is_number_float()) ns = parse_us(raw_number_);
      if (!ns) return fail(event_label() + "." + k + " is not a time in microseconds");
      if (k == keys::kTs) event_.ts_ns = *ns, has_ts_ = true;
      else event_.dur_ns = *ns, has_dur_ = true;
    } else if (k == keys::kId) {
      if (v.is_string()) event_.id = v.get<std::string>();
      else if (v.is_number()) event_.id = v.dump();
      else return fail(event_label() + ".id is neither a string nor a number");
    } else if (k == keys::kArgs) {
      if (!v.is_null()) return fail(event_label() + ".args is not an object");
    }
    return true;  // other keys ("s", "bp", ...) are implied by ph and not kept
  }

  bool finish_event() {
    if (!has_ph_) return fail(event_label() + " has no \"ph\"");
    if (event_.ph != 'M' && !has_ts_) return fail(event_label() + " (\"" + event_.name + "\") has no \"ts\"");
    if (event_.ph == 'X' && !has_dur_) return fail(event_label() + " (\"" + event_.name + "\") is a complete event without \"dur\"");
    if (event_.dur_ns < 0) return fail(event_label() + " (\"" + event_.name + "\") has a negative duration");
    if (event_.ph == 'M' && event_.name == keys::kMetadataPatch && event_.args.is_object() && header_done_)
      out_.shardscope.merge_patch(event_.args);
    out_.events.push_back(std::move(event_));
    element_start_ = pos();
    state_ = State::Events;
    return true;
  }

  TraceFile& out_;
  const char* base_;
  size_t size_;
  const char*& cursor_;
  std::optional<std::pair<uint64_t, std::string>> error_;
  State state_ = State::Start;
  std::string key_;
  std::string raw_number_;
  int skip_depth_ = 0;
  Capture capture_ = Capture::None;
  json* target_ = nullptr;
  std::optional<ValueBuilder> builder_;
  Event event_;
  bool has_ph_ = false, has_ts_ = false, has_dur_ = false;
  bool saw_events_ = false, header_done_ = false;
  uint64_t header_start_ = 0, key_start_ = 0, event_start_ = 0, element_start_ = 0;
};

}  // namespace

TraceFile parse_trace(std::string_view text, const std::string& name) {
  TraceFile out;
  out.name = name;
  out.json_bytes = text.size();
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    throw TraceError(name, 0, text.empty() ? "empty file" : "file holds only whitespace");
  const char* cursor = text.data();
  Handler h(out, text.data(), text.size(), cursor);
  TrackedIt first{text.data(), &cursor};
  TrackedIt last{text.data() + text.size(), &cursor};
  json::sax_parse(first, last, &h);
  h.finish(name);
  return out;
}

std::string read_file_text(const std::filesystem::path& path, bool* was_gzip) {
  const std::string name = path.string();
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw TraceError(name, 0, "is a directory, not a trace file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TraceError(name, 0, std::string("cannot open: ") + std::strerror(errno));
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw TraceError(name, raw.size(), "read error");
  bool gz = raw.size() >= 2 && uint8_t(raw[0]) == 0x1f && uint8_t(raw[1]) == 0x8b;
  if (was_gzip) *was_gzip = gz;
  if (!gz) return raw;

  std::string text;
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) throw TraceError(name, 0, "cannot start zlib");
  zs.next_in = reinterpret_cast<Bytef*>(raw.data());
  zs.avail_in = uInt(raw.size());
  text.resize(raw.size() * 4 + 4096);
  for (;;) {
    if (zs.total_out == text.size()) text.resize(text.size() * 2);
    zs.next_out = reinterpret_cast<Bytef*>(text.data() + zs.total_out);
    zs.avail_out = uInt(std::min<size_t>(text.size() - zs.total_out, 1u << 30));
    int rc = inflate(&zs, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) {
      if (zs.avail_in == 0) break;
      inflateReset(&zs);  // another gzip member follows
      continue;
    }
    if (rc == Z_BUF_ERROR && zs.avail_in == 0) break;  // compressed stream cut short: keep what inflated
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      uint64_t at = zs.total_in;
      std::string msg = zs.msg ? zs.msg : "error " + std::to_string(rc);
      inflateEnd(&zs);
      throw TraceError(name, at, "corrupt gzip data: " + msg);
    }
  }
  text.resize(zs.total_out);
  inflateEnd(&zs);
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
