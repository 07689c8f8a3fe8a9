#include "plugins/load/read_text.h"

#include <fcntl.h>
#include <libdeflate.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "tracer/format/error.h"
#include "tracer/format/limits.h"
#include "tracer/format/reader.h"

namespace shardscope::plugins {
namespace {

struct Mapping {
  void* addr = nullptr;
  size_t len = 0;
  ~Mapping() {
    if (addr) munmap(addr, len);
  }
};

std::shared_ptr<Mapping> map_file(const std::filesystem::path& path) {
  const std::string name = path.string();
  uint64_t size = 0;
  int fd = trace::open_regular(path, &size);  // refuses directories, FIFOs, devices and oversized files by name
  auto m = std::make_shared<Mapping>();
  m->len = size_t(size);
  if (m->len > 0) {
    void* a = mmap(nullptr, m->len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (a == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      throw trace::TraceError(name, 0, std::string("cannot map: ") + std::strerror(err));
    }
    m->addr = a;
    madvise(a, m->len, MADV_SEQUENTIAL);
  }
  ::close(fd);
  return m;
}

}  // namespace

FileText read_text(const std::filesystem::path& path) {
  FileText f;
  std::shared_ptr<Mapping> m = map_file(path);
  const char* raw = static_cast<const char*>(m->addr);
  size_t raw_size = m->len;
  f.gzip = raw_size >= 2 && uint8_t(raw[0]) == 0x1f && uint8_t(raw[1]) == 0x8b;
  if (!f.gzip) {
    f.data = raw ? raw : "";
    f.size = raw_size;
    f.owner = m;
    return f;
  }
  // The gzip trailer's ISIZE is the inflated size mod 2^32: exact for a single-member file under 4 GiB, which
  // lets libdeflate inflate in one pass into a buffer of the right size (no doubling, so no 2x peak). But a
  // cut or forged file can claim anything: it is trusted only as far as deflate can expand (at most 1032 to
  // 1) and the text limit allow; otherwise, and whenever libdeflate fails, zlib streams with a growing buffer.
  uint32_t isize = 0;
  if (raw_size >= 18) std::memcpy(&isize, raw + raw_size - 4, 4);
  const uint64_t limit = trace::max_text_bytes();
  const bool plausible = raw_size >= 18 && isize > 0 && isize <= limit && uint64_t(isize) <= uint64_t(raw_size) * 1032;
  if (plausible) {
    std::shared_ptr<char[]> out(new char[size_t(isize) + 1]);
    libdeflate_decompressor* d = libdeflate_alloc_decompressor();
    size_t in_used = 0, out_size = 0;
    libdeflate_result r = libdeflate_gzip_decompress_ex(d, raw, raw_size, out.get(), isize, &in_used, &out_size);
    libdeflate_free_decompressor(d);
    if (r == LIBDEFLATE_SUCCESS && in_used == raw_size && out_size == isize) {
      f.data = out.get();
      f.size = out_size;
      f.owner = std::shared_ptr<const void>(out, out.get());
      return f;
    }
  }
  // Cut off, several members, a trailer that lies, or over 4 GiB: zlib's streaming inflate keeps what
  // inflated before a cut and stops at the limit.
  auto text = std::make_shared<std::string>();
  std::optional<uint64_t> cut = trace::inflate_gzip(std::string_view(raw, raw_size), path.string(), *text, plausible ? isize : 0);
  m.reset();
  // A truncated stream inflates less than a whole file would; flag it so the message can say why.
  if (cut) f.gzip_cut_at = text->size();
  f.data = text->data();
  f.size = text->size();
  f.owner = text;
  return f;
}

}  // namespace shardscope::plugins
