#include "plugins/load/read_text.h"

#include <fcntl.h>
#include <libdeflate.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "plugins/api/importer.h"
#include "tracer/format/error.h"
#include "tracer/format/reader.h"

namespace shardscope::plugins {
namespace {

std::string read_raw(const std::filesystem::path& path, size_t padding) {
  const std::string name = path.string();
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw trace::TraceError(name, 0, "is a directory, not a trace file");
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw trace::TraceError(name, 0, std::string("cannot open: ") + std::strerror(errno));
  struct stat st{};
  fstat(fd, &st);
  std::string out;
  out.resize(size_t(st.st_size) + padding);
  size_t got = 0;
  for (;;) {
    if (got == out.size() - padding) out.resize(out.size() * 2 + 4096);  // the file grew while we read it
    ssize_t n = ::read(fd, out.data() + got, out.size() - padding - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      throw trace::TraceError(name, got, std::string("read error: ") + std::strerror(err));
    }
    if (n == 0) break;
    got += size_t(n);
  }
  ::close(fd);
  out.resize(got + padding);
  return out;
}

}  // namespace

FileText read_text(const std::filesystem::path& path) {
  FileText f;
  f.buffer = read_raw(path, Input::kPadding);
  size_t raw_size = f.buffer.size() - Input::kPadding;
  f.gzip = raw_size >= 18 && uint8_t(f.buffer[0]) == 0x1f && uint8_t(f.buffer[1]) == 0x8b;
  if (!f.gzip) {
    f.size = raw_size;
    std::memset(f.buffer.data() + f.size, 0, Input::kPadding);
    return f;
  }
  // The gzip trailer's ISIZE is the inflated size mod 2^32: exact for a single-member file under 4 GiB, which
  // lets libdeflate inflate in one pass into a buffer of the right size (no doubling, so no 2x peak).
  uint32_t isize = 0;
  std::memcpy(&isize, f.buffer.data() + raw_size - 4, 4);
  std::string out(size_t(isize) + Input::kPadding, '\0');
  libdeflate_decompressor* d = libdeflate_alloc_decompressor();
  size_t in_used = 0, out_size = 0;
  libdeflate_result r = libdeflate_gzip_decompress_ex(d, f.buffer.data(), raw_size, out.data(), isize, &in_used, &out_size);
  libdeflate_free_decompressor(d);
  if (r == LIBDEFLATE_SUCCESS && in_used == raw_size && out_size == isize) {
    f.buffer = std::move(out);
    f.size = out_size;
    return f;
  }
  // Cut off, several members, or over 4 GiB: zlib's streaming inflate keeps what inflated before a cut.
  out = std::string();
  f.buffer = std::string();
  std::string text = trace::read_file_text(path);
  // A truncated stream inflates less than a whole file would; flag it so the parser's truncation message says why.
  if (r != LIBDEFLATE_SUCCESS && r != LIBDEFLATE_INSUFFICIENT_SPACE) f.gzip_cut_at = text.size();
  f.size = text.size();
  text.resize(f.size + Input::kPadding, '\0');
  f.buffer = std::move(text);
  return f;
}

}  // namespace shardscope::plugins
