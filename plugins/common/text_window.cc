#include "plugins/common/text_window.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "plugins/common/magic.h"
#include "tracer/format/error.h"
#include "tracer/format/limits.h"
#include "tracer/format/reader.h"

namespace shardscope::plugins {
namespace {

thread_local TextWindow* current = nullptr;

[[noreturn]] void fail(const char* what) { throw std::system_error(errno, std::generic_category(), what); }

}  // namespace

// zlib's streaming inflate over the compressed file, read in a buffer reused call after call. Errors as
// trace::inflate_gzip words them: corrupt data at its compressed byte; every member inflated; a stream
// that stops early is a cut file, whose text ends there.
struct TextWindow::Inflater {
  explicit Inflater(int fd, const std::string& name) : fd(fd), name(name) {
    if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) throw trace::TraceError(name, 0, "cannot start zlib");
  }
  ~Inflater() { inflateEnd(&zs); }
  void restart() {
    inflateReset(&zs);
    zs.avail_in = 0, read = 0, eof = false;
  }
  // More compressed bytes; false at the file's end.
  bool refill() {
    if (eof) return false;
    for (;;) {
      ssize_t n = ::pread(fd, buf.get(), kBuf, off_t(read));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw trace::TraceError(name, read, std::string("cannot read: ") + std::strerror(errno));
      if (n == 0) return eof = true, false;
      zs.next_in = reinterpret_cast<Bytef*>(buf.get()), zs.avail_in = uInt(n), read += uint64_t(n);
      return true;
    }
  }
  uint64_t at() const { return read - zs.avail_in; }  // compressed bytes taken
  // Inflates into [out, out + room); sets `ended` when the text is whole.
  size_t run(char* out, size_t room, bool& ended) {
    size_t made = 0;
    while (made < room && !ended) {
      if (zs.avail_in == 0 && !refill()) {
        ended = true;  // all input taken and no end of stream: the file was cut short; keep what inflated
        break;
      }
      zs.next_out = reinterpret_cast<Bytef*>(out + made), zs.avail_out = uInt(room - made);
      int rc = inflate(&zs, Z_NO_FLUSH);
      made = room - zs.avail_out;
      if (rc == Z_STREAM_END) {
        if (zs.avail_in == 0 && !refill()) ended = true;
        else
          inflateReset(&zs);  // another gzip member follows
        continue;
      }
      if (rc != Z_OK && rc != Z_BUF_ERROR)
        throw trace::TraceError(name, at(),
                                "corrupt gzip data: " + std::string(zs.msg ? zs.msg : "error " + std::to_string(rc)));
    }
    return made;
  }

  static constexpr size_t kBuf = 256 << 10;
  int fd;
  const std::string& name;
  z_stream zs{};
  std::unique_ptr<char[]> buf{new char[kBuf]};
  uint64_t read = 0;  // compressed bytes read from the file
  bool eof = false;
};

TextWindow::TextWindow(const std::filesystem::path& path, size_t piece_bytes, size_t head)
    : name_(path.string()), piece_(piece_bytes) {
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  piece_ = std::max(page, piece_ / page * page);
  fd_ = trace::open_regular(path, &size_);  // refuses directories, FIFOs, devices and oversized files by name
  hint_ = size_;
  char magic[2] = {};
  if (size_ >= 2 && ::pread(fd_, magic, 2, 0) == 2 && is_gzip({magic, 2})) {
    // The trailer's size is trusted as read_text trusts it: within what deflate can expand to and the limit.
    const uint64_t compressed = size_, limit = trace::max_text_bytes();
    uint32_t isize = 0;
    if (compressed >= 18 && ::pread(fd_, &isize, 4, off_t(compressed - 4)) != 4) isize = 0;
    hint_ =
        isize > 0 && isize <= limit && uint64_t(isize) <= compressed * 1032 ? isize : std::min(limit, compressed * 4);
    size_ = limit + 1;  // one byte over: room to see that the text does not stop at the limit
    limit_ = limit;
    gz_ = std::make_unique<Inflater>(fd_, name_);
  }
  mem_ = memfd_create("shardscope-text", MFD_CLOEXEC);
  const size_t pieces = size_t(size_ / piece_) + 1;  // one past the end: the text's end is always inside a piece
  reserved_ = uint64_t(pieces) * piece_;
  void* at =
      mem_ < 0 ? MAP_FAILED : mmap(nullptr, reserved_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (at == MAP_FAILED) {
    int err = errno;
    if (mem_ >= 0) ::close(mem_);
    ::close(fd_);
    errno = err;
    fail("text window");
  }
  base_ = static_cast<char*>(at);
  slot_of_.assign(pieces, -1);
  opened_size_ = size_;
  try {
    extend(base_ + std::min<uint64_t>(head, size_));
  } catch (...) {
    close_all();  // a constructor that throws runs no destructor
    throw;
  }
}

TextWindow::~TextWindow() { close_all(); }

void TextWindow::close_all() {
  if (base_) munmap(base_, reserved_), base_ = nullptr;
  if (mem_ >= 0) ::close(mem_), mem_ = -1;
  if (fd_ >= 0) ::close(fd_), fd_ = -1;
}

// Piece i onto a free slot (the memory file grows by one when none is), its pages populated at once: a slot
// reused has its pages already, so this costs page-table entries, not fresh pages.
void TextWindow::map_piece(size_t i) {
  int32_t slot;
  if (!free_.empty()) {
    slot = free_.back(), free_.pop_back();
  } else {
    slot = int32_t(slots_);
    if (ftruncate(mem_, off_t(slots_ + 1) * off_t(piece_)) != 0) fail("text window");
    ++slots_;
  }
  void* at = mmap(base_ + i * piece_, piece_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED | MAP_POPULATE, mem_,
                  off_t(slot) * off_t(piece_));
  if (at == MAP_FAILED) {
    free_.push_back(slot);
    fail("text window");
  }
  slot_of_[i] = slot;
}

// Back to reserved address space (one call: the range is never left open for another mapping).
void TextWindow::unmap_piece(size_t i) {
  if (slot_of_[i] < 0) return;
  if (mmap(base_ + i * piece_, piece_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) ==
      MAP_FAILED)
    fail("text window");
  free_.push_back(slot_of_[i]);
  slot_of_[i] = -1;
}

void TextWindow::extend(const char* to) {
  const uint64_t want = std::min<uint64_t>(size_, uint64_t(std::max<const char*>(to, base_) - base_));
  while (!whole_ && avail_ < want) {
    const size_t i = size_t(avail_ / piece_);
    if (slot_of_[i] < 0) map_piece(i);
    const uint64_t stop = std::min<uint64_t>(size_, uint64_t(i + 1) * piece_);
    const size_t n = fill(base_ + avail_, size_t(stop - avail_));
    avail_ += n;
    if (n == 0) size_ = avail_;  // the file shrank since it was opened, or its gzip text ended: it ends here
    if (avail_ == size_) whole_ = true;
  }
  if (avail_ == size_) whole_ = true;  // an empty file: nothing to read
  if (avail_ > limit_)
    throw trace::TraceError(name_, gz_->at(),
                            "the gzip data inflates to more than " + trace::show_bytes(limit_) +
                                " of JSON text, the limit (--max-trace-bytes raises it): refused");
}

size_t TextWindow::fill(char* at, size_t room) {
  if (gz_) {
    bool ended = false;
    const size_t n = gz_->run(at, room, ended);
    if (ended) size_ = avail_ + n;  // the caller's avail_ += n then meets size_: whole
    return n;
  }
  for (;;) {
    ssize_t n = ::pread(fd_, at, room, off_t(avail_));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw trace::TraceError(name_, avail_, std::string("cannot read: ") + std::strerror(errno));
    return size_t(n);
  }
}

void TextWindow::release(const char* from, const char* to) {
  const uint64_t lo = (uint64_t(from - base_) + piece_ - 1) / piece_;
  const uint64_t hi = uint64_t(std::min(to, end()) - base_) / piece_;  // the piece at end() is being read
  for (uint64_t i = lo; i < hi; ++i) unmap_piece(size_t(i));
}

void TextWindow::rewind() {
  for (size_t i = 0; i < slot_of_.size(); ++i) unmap_piece(i);
  // The same file read again, to the size it had when opened (one that shrank since ends sooner).
  avail_ = 0, whole_ = false, size_ = opened_size_;
  if (gz_) gz_->restart();
  extend(base_ + std::min<uint64_t>(piece_, size_));  // the head, as when opened
}

void TextWindow::finish() {
  for (size_t i = 0; i < slot_of_.size(); ++i) unmap_piece(i);
  while (gz_ && !whole_) {
    const size_t from = size_t(avail_ / piece_);
    extend(end() + piece_);
    for (size_t i = from; i <= size_t(avail_ / piece_) && i < slot_of_.size(); ++i) unmap_piece(i);
  }
  if (ftruncate(mem_, 0) == 0) free_.clear();  // the pieces' memory back to the system (slots_ stays the most held)
}

TextWindow* text_window_of(const char* data) { return current && current->data() == data ? current : nullptr; }

TextWindowScope::TextWindowScope(TextWindow* w) : previous_(current) { current = w; }
TextWindowScope::~TextWindowScope() { current = previous_; }

}  // namespace shardscope::plugins
