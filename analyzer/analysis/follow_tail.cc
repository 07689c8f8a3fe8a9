#include "analyzer/analysis/follow_tail.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <algorithm>
#include <cstring>

#include "tracer/format/error.h"
#include "tracer/format/keys.h"
#include "tracer/format/limits.h"
#include "tracer/format/reader.h"

namespace shardscope::analysis {
namespace {

constexpr size_t kReadChunk = 4u << 20;  // raw bytes read per poll: one rank's new text at a time stays small
constexpr std::string_view kEventsKey = "\"traceEvents\":[";

// A TraceError's own words, without the "file: at byte N: " that its message starts with.
std::string detail_of(const trace::TraceError& e) {
  const std::string w = e.what();
  const std::string lead = e.file().empty() ? "" : ": at byte " + std::to_string(e.offset()) + ": ";
  const size_t at = lead.empty() ? std::string::npos : w.find(lead);
  return at == std::string::npos ? w : w.substr(at + lead.size());
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\n' || s.front() == '\r' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

}  // namespace

// gzip inflated as it arrives: the writer sync-flushes at each flush, so what has reached the file inflates
// to whole lines; a member's end starts the next member.
class TraceTail::Inflater {
 public:
  explicit Inflater(std::string name) : name_(std::move(name)) {
    if (inflateInit2(&z_, 16 + MAX_WBITS) != Z_OK) throw trace::TraceError(name_, 0, "cannot start inflating");
  }
  ~Inflater() { inflateEnd(&z_); }
  void feed(const char* data, size_t n, uint64_t raw_at, std::string& out) {
    z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
    z_.avail_in = unsigned(n);
    char buf[1 << 16];
    while (z_.avail_in > 0) {
      z_.next_out = reinterpret_cast<Bytef*>(buf);
      z_.avail_out = sizeof buf;
      const int rc = inflate(&z_, Z_NO_FLUSH);
      out.append(buf, sizeof buf - z_.avail_out);
      if (rc == Z_STREAM_END) {
        inflateReset(&z_);
        continue;
      }
      if (rc == Z_BUF_ERROR) break;  // needs the bytes the writer has not written yet
      if (rc != Z_OK)
        throw trace::TraceError(name_, raw_at + n - z_.avail_in, "corrupt gzip data (of the compressed file)");
      if (z_.avail_out != 0 && z_.avail_in == 0) break;
    }
    // What is left unread here is a header or trailer cut short: zlib keeps it in its state.
  }

 private:
  std::string name_;
  z_stream z_{};
};

TraceTail::TraceTail(std::filesystem::path path) : path_(std::move(path)), name_(path_.string()) {}

TraceTail::~TraceTail() {
  if (fd_ >= 0) ::close(fd_);
}

void TraceTail::read_more() {
  if (fd_ < 0) {
    if (!std::filesystem::exists(path_)) return;  // not written yet
    uint64_t size = 0;
    fd_ = trace::open_regular(path_, &size);
  }
  std::string raw(kReadChunk, '\0');
  ssize_t n;
  do n = ::pread(fd_, raw.data(), raw.size(), off_t(raw_offset_));
  while (n < 0 && errno == EINTR);
  if (n < 0) throw trace::TraceError(name_, raw_offset_, std::string("cannot read: ") + std::strerror(errno));
  if (n == 0) return;
  raw.resize(size_t(n));
  if (!sniffed_) {
    if (raw_offset_ == 0 && raw.size() < 2) return;  // too little to tell gzip from text; read again later
    sniffed_ = true;
    if (uint8_t(raw[0]) == 0x1f && uint8_t(raw[1]) == 0x8b) gz_ = std::make_unique<Inflater>(name_);
  }
  if (gz_) gz_->feed(raw.data(), raw.size(), raw_offset_, text_);
  else
    text_ += raw;
  raw_offset_ += uint64_t(n);
}

void TraceTail::take_header() {
  // The writer starts every file with its header: anything else is another program's file.
  const std::string lead = std::string("{\"") + keys::kShardscope + "\":";
  if (text_.compare(0, std::min(text_.size(), lead.size()), lead, 0, std::min(text_.size(), lead.size())) != 0)
    throw trace::TraceError(name_, 0,
                            "not a shardscope trace as its writer starts one ({\"shardscope\": first): following "
                            "reads the files of shardscope's tracer, trainer and injection library");
  const size_t at = text_.find(kEventsKey);
  if (at == std::string::npos) {
    // A header this long without its events is no trace the writer made: let the reader say what it is.
    if (text_.size() > trace::limits().max_string_bytes) {
      trace::parse_trace(text_, name_);
      throw trace::TraceError(name_, text_offset_ + text_.size(), "no \"traceEvents\" after the header");
    }
    return;
  }
  const size_t end = at + kEventsKey.size();
  trace::TraceFile tf = trace::parse_trace(text_.substr(0, end) + "]}", name_);
  if (!tf.shardscope.is_object())
    throw trace::TraceError(name_, 0, "not a shardscope trace: no \"shardscope\" header before \"traceEvents\"");
  header_ = std::move(tf.shardscope);
  text_.erase(0, end);
  text_offset_ += end;
}

std::vector<trace::Event> TraceTail::poll() {
  std::vector<trace::Event> out;
  if (complete_) return out;
  read_more();
  if (header_.is_null()) take_header();
  if (header_.is_null()) return out;
  // Whole records: the text up to the last line end. The writer ends the last one with "\n]}" on close.
  const size_t last_nl = text_.rfind('\n');
  if (last_nl != std::string::npos && trim(std::string_view(text_).substr(last_nl)) == "]}") {
    text_ += '\n';  // the closing line without its line end is still the end
    return poll_whole(text_.size() - 1);
  }
  if (last_nl == std::string::npos) {
    if (text_.size() > trace::limits().max_string_bytes + (1u << 20))
      throw trace::TraceError(
          name_, text_offset_,
          "a record of over " + std::to_string(text_.size()) + " bytes with no line end: not a trace the writer made");
    return out;
  }
  return poll_whole(last_nl);
}

// Hands over the records in text_[0, last_nl]: whole lines.
std::vector<trace::Event> TraceTail::poll_whole(size_t last_nl) {
  std::vector<trace::Event> out;
  const std::string_view whole(text_.data(), last_nl + 1);
  const size_t span_from = std::min(whole.find_first_not_of(" \r\n\t"), whole.size());
  std::string_view span = trim(whole);
  // The closing line ends the events.
  const size_t close_nl = span.rfind('\n');
  if (trim(span.substr(close_nl == std::string_view::npos ? 0 : close_nl)) == "]}") {
    complete_ = true;
    span = trim(span.substr(0, close_nl == std::string_view::npos ? 0 : close_nl));
  }
  if (!span.empty() && span.back() == ',') span.remove_suffix(1);
  if (!span.empty()) out = parse_lines({span}, text_offset_ + span_from);
  text_.erase(0, last_nl + 1);
  text_offset_ += last_nl + 1;
  if (complete_) text_.clear();
  return out;
}

std::vector<trace::Event> TraceTail::parse_lines(const std::vector<std::string_view>& lines, uint64_t first_offset) {
  std::string doc = "{\"";
  doc += keys::kShardscope;
  doc += "\":";
  doc += header_.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  doc += ",\"";
  doc += keys::kTraceEvents;
  doc += "\":[";
  const size_t prefix = doc.size();
  for (std::string_view l : lines) doc += l;
  doc += "]}";
  auto file_offset = [&](uint64_t at) { return at >= prefix ? first_offset + (at - prefix) : first_offset; };
  trace::TraceFile tf;
  try {
    tf = trace::parse_trace(doc, name_);
  } catch (const trace::TraceError& e) {
    throw trace::TraceError(name_, file_offset(e.offset()), detail_of(e));
  }
  // Whole lines that do not parse are no cut the writer leaves: the file is damaged there.
  if (tf.truncated) throw trace::TraceError(name_, file_offset(tf.truncated->offset), tf.truncated->detail);
  header_ = std::move(tf.shardscope);
  return std::move(tf.events);
}

}  // namespace shardscope::analysis
