// A file's text read through a window of reused memory: the text keeps one address range as long as the
// file (reserved, never touched), but only the pieces being parsed are mapped there, each on pages of one
// memory file that are mapped again further on once the parse is past them. A 1 GB trace then costs a few
// MB of pages faulted once, not 1 GB of fresh ones (the kernel's page faults were 60 % of `report`'s on the
// generated 1 GB file). A gzip file is inflated into the pieces as the parse goes (zlib, streaming), so its
// text is never whole in memory either. Linux only; the loader reads the file whole where opening fails.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace shardscope::plugins {

class TextWindow {
 public:
  // Reads the file's first `head` bytes (the loader's head) in pieces of `piece_bytes` (a multiple of the
  // page size; tests make it one page). Throws trace::TraceError as read_text() does, std::system_error
  // when the memory file or the address range cannot be had.
  explicit TextWindow(const std::filesystem::path& path, size_t piece_bytes = kPieceBytes, size_t head = 64 << 10);
  ~TextWindow();
  TextWindow(const TextWindow&) = delete;
  TextWindow& operator=(const TextWindow&) = delete;

  static constexpr size_t kPieceBytes = 1 << 20;

  const char* data() const { return base_; }
  // The most it reads: a plain file's size when opened; for gzip, the text limit (trace::max_text_bytes())
  // until whole(). Once whole(), the text's size.
  uint64_t size() const { return size_; }
  // What the text's size is likely to be: size() for a plain file; gzip's trailer where it is plausible (as
  // read_text takes it), else four times the compressed size. For reservations and progress only.
  uint64_t size_hint() const { return hint_; }
  bool gzip() const { return gz_ != nullptr; }
  // The text is read up to here; whole(): that is where the file ends (shorter than size() when it shrank,
  // or its gzip stream was cut off).
  const char* end() const { return base_ + avail_; }
  bool whole() const { return whole_; }
  // Reads on until end() reaches `to` or the file ends. Throws trace::TraceError when a read fails.
  void extend(const char* to);
  // The text in [from, to) is read no more: the pieces wholly inside go back to be reused (reading them
  // again is a bug: they are unmapped). A piece holding `from` stays, with what precedes it.
  void release(const char* from, const char* to);
  // Back to the file's start, for a second pass (everything read is dropped and read again).
  void rewind();
  // Reads (inflates) what is left of a gzip file, giving back every piece, so that size() is the text's;
  // its memory goes back. The text can no longer be read after. Throws as extend() does.
  void finish();
  size_t piece_bytes() const { return piece_; }
  size_t pages_held() const { return slots_; }  // pieces of memory ever in use at once: the window's size

 private:
  void map_piece(size_t i);
  void unmap_piece(size_t i);
  void close_all();
  size_t fill(char* at, size_t room);  // the next text into [at, at + room): bytes read, 0 at the end

  struct Inflater;

  std::string name_;
  int fd_ = -1, mem_ = -1;  // the file; the memory file whose pieces are mapped in turn
  char* base_ = nullptr;
  uint64_t size_ = 0, opened_size_ = 0, reserved_ = 0, avail_ = 0;
  bool whole_ = false;
  uint64_t hint_ = 0, limit_ = UINT64_MAX;  // limit_: gzip's text limit
  std::unique_ptr<Inflater> gz_;
  size_t piece_;
  std::vector<int32_t> slot_of_;  // each piece's slot in the memory file, -1: not mapped
  std::vector<int32_t> free_;     // slots no piece holds
  size_t slots_ = 0;
};

// The window behind a text the loader hands an importer (`data` its first byte), on the calling thread;
// nullptr when the text is whole in memory. Thread-local so that the Importer interface does not change.
TextWindow* text_window_of(const char* data);
class TextWindowScope {
 public:
  explicit TextWindowScope(TextWindow* w);
  ~TextWindowScope();
  TextWindowScope(const TextWindowScope&) = delete;
  TextWindowScope& operator=(const TextWindowScope&) = delete;

 private:
  TextWindow* previous_;
};

}  // namespace shardscope::plugins
