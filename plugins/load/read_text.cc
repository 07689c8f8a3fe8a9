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
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw trace::TraceError(name, 0, "is a directory, not a trace file");
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw trace::TraceError(name, 0, std::string("cannot open: ") + std::strerror(errno));
  struct stat st{};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw trace::TraceError(name, 0, "not a regular file");
  }
  auto m = std::make_shared<Mapping>();
  m->len = size_t(st.st_size);
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
  f.gzip = raw_size >= 18 && uint8_t(raw[0]) == 0x1f && uint8_t(raw[1]) == 0x8b;
  if (!f.gzip) {
    f.data = raw ? raw : "";
    f.size = raw_size;
    f.owner = m;
    return f;
  }
  // The gzip trailer's ISIZE is the inflated size mod 2^32: exact for a single-member file under 4 GiB, which
  // lets libdeflate inflate in one pass into a buffer of the right size (no doubling, so no 2x peak).
  uint32_t isize = 0;
  std::memcpy(&isize, raw + raw_size - 4, 4);
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
  // Cut off, several members, or over 4 GiB: zlib's streaming inflate keeps what inflated before a cut.
  out.reset();
  m.reset();
  auto text = std::make_shared<std::string>(trace::read_file_text(path));
  // A truncated stream inflates less than a whole file would; flag it so the message can say why.
  if (r != LIBDEFLATE_SUCCESS && r != LIBDEFLATE_INSUFFICIENT_SPACE) f.gzip_cut_at = text->size();
  f.data = text->data();
  f.size = text->size();
  f.owner = text;
  return f;
}

}  // namespace shardscope::plugins
