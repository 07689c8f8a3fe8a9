#include "plugins/common/text_window.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "tracer/format/error.h"
#include "tracer/format/reader.h"

namespace shardscope::plugins {
namespace {

thread_local TextWindow* current = nullptr;

[[noreturn]] void fail(const char* what) { throw std::system_error(errno, std::generic_category(), what); }

}  // namespace

TextWindow::TextWindow(const std::filesystem::path& path, size_t piece_bytes, size_t head)
    : name_(path.string()), piece_(piece_bytes) {
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  piece_ = std::max(page, piece_ / page * page);
  fd_ = trace::open_regular(path, &size_);  // refuses directories, FIFOs, devices and oversized files by name
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
    ssize_t n = ::pread(fd_, base_ + avail_, size_t(stop - avail_), off_t(avail_));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw trace::TraceError(name_, avail_, std::string("cannot read: ") + std::strerror(errno));
    if (n == 0) {
      size_ = avail_;  // the file shrank since it was opened: it ends here
      break;
    }
    avail_ += uint64_t(n);
  }
  if (avail_ == size_) whole_ = true;
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
  extend(base_ + std::min<uint64_t>(piece_, size_));  // the head, as when opened
}

TextWindow* text_window_of(const char* data) { return current && current->data() == data ? current : nullptr; }

TextWindowScope::TextWindowScope(TextWindow* w) : previous_(current) { current = w; }
TextWindowScope::~TextWindowScope() { current = previous_; }

}  // namespace shardscope::plugins
