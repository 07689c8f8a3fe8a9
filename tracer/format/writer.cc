#include "tracer/format/writer.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>

#include "tracer/format/error.h"
#include "tracer/format/keys.h"
#include "tracer/format/serialize.h"

namespace shardscope::trace {

namespace {
constexpr size_t kPendingLimit = 1 << 20;  // write through once this much is buffered

bool is_gzip_path(const std::filesystem::path& p) { return p.extension() == ".gz"; }
}  // namespace

// A plain file descriptor or a gzip stream over one.
class Writer::Sink {
 public:
  explicit Sink(const std::filesystem::path& path) : name_(path.string()) {
    // A new file, never the old one truncated: a report or viewer still reading the previous run's trace at
    // this path keeps its bytes (the old inode lives until it is closed).
    if (::unlink(name_.c_str()) != 0 && errno != ENOENT)
      throw TraceError(name_, 0, std::string("cannot replace: ") + std::strerror(errno));
    fd_ = ::open(name_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd_ < 0) throw TraceError(name_, 0, std::string("cannot create: ") + std::strerror(errno));
    if (is_gzip_path(path)) {
      gz_ = gzdopen(fd_, "wb6");
      if (!gz_) {
        ::close(fd_);
        throw TraceError(name_, 0, "cannot start a gzip stream");
      }
    }
  }
  ~Sink() { close(); }

  void write(std::string_view data) {
    if (data.empty()) return;
    if (gz_) {
      if (gzwrite(gz_, data.data(), unsigned(data.size())) != int(data.size())) fail("gzip write failed");
      return;
    }
    const char* p = data.data();
    size_t left = data.size();
    while (left > 0) {
      ssize_t n = ::write(fd_, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail(std::string("write failed: ") + std::strerror(errno));
      p += n;
      left -= size_t(n);
      written_ += uint64_t(n);
    }
  }
  void flush() {
    if (gz_ && gzflush(gz_, Z_SYNC_FLUSH) != Z_OK) fail("gzip flush failed");
  }
  void close() {
    if (gz_) {
      gzclose(gz_);  // also closes fd_
      gz_ = nullptr;
      fd_ = -1;
    } else if (fd_ >= 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what) { throw TraceError(name_, written_, what); }
  std::string name_;
  int fd_ = -1;
  gzFile gz_ = nullptr;
  uint64_t written_ = 0;
};

Writer::Writer(const std::filesystem::path& path, const nlohmann::json& shardscope)
    : path_(path), sink_(std::make_unique<Sink>(path)) {
  pending_ = "{\"";
  pending_ += keys::kShardscope;
  pending_ += "\":";
  pending_ += shardscope.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  pending_ += ",\"";
  pending_ += keys::kDisplayTimeUnit;
  pending_ += "\":\"ns\",\"";
  pending_ += keys::kTraceEvents;
  pending_ += "\":[";
  flush();
}

Writer::~Writer() {
  try {
    close();
  } catch (const std::exception&) {
    // A destructor must not throw; the file keeps every event flushed so far.
  }
}

void Writer::append(const Event& e) {
  std::string s;
  append_event(s, e);
  append_serialized(s);
}

void Writer::append_serialized(std::string_view event_json) {
  if (!sink_) throw TraceError(path_.string(), 0, "append after close");
  pending_ += events_ == 0 ? "\n" : ",\n";
  pending_ += event_json;
  ++events_;
  if (pending_.size() >= kPendingLimit) {
    sink_->write(pending_);
    pending_.clear();
  }
}

void Writer::flush() {
  if (!sink_) return;
  sink_->write(pending_);
  pending_.clear();
  sink_->flush();
}

void Writer::close() {
  if (!sink_) return;
  pending_ += "\n]}\n";
  flush();
  sink_->close();
  sink_.reset();
}

}  // namespace shardscope::trace
