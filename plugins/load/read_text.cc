#include "plugins/load/read_text.h"

#include "plugins/common/magic.h"
#include "plugins/common/text_window.h"

#include <fcntl.h>
#include <libdeflate.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <system_error>

#include "tracer/format/error.h"
#include "tracer/format/limits.h"
#include "tracer/format/reader.h"

namespace shardscope::plugins {
namespace {

// The file's bytes, read rather than mapped: a mapped file that shrinks under the reader (a job re-run into the
// same trace folder) raises SIGBUS on the pages past its new end; a read sees the bytes that were there and
// stops where the file ends. One extra copy at memory speed, next to parsing at a few hundred MB/s.
struct Bytes {
  std::unique_ptr<char[]> data;
  size_t len = 0;
};

std::shared_ptr<Bytes> read_file(const std::filesystem::path& path) {
  const std::string name = path.string();
  uint64_t size = 0;
  int fd = trace::open_regular(path, &size);  // refuses directories, FIFOs, devices and oversized files by name
  auto b = std::make_shared<Bytes>();
  b->data.reset(new char[size_t(size) + 1]);
  while (b->len < size) {  // a file grown since the stat is read as it was then; one that shrank, to its end
    ssize_t n = ::read(fd, b->data.get() + b->len, size_t(size) - b->len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      throw trace::TraceError(name, b->len, std::string("cannot read: ") + std::strerror(err));
    }
    if (n == 0) break;
    b->len += size_t(n);
  }
  ::close(fd);
  return b;
}

}  // namespace

FileText read_text(const std::filesystem::path& path) {
  FileText f;
  std::shared_ptr<Bytes> m = read_file(path);
  const char* raw = m->data.get();
  size_t raw_size = m->len;
  f.gzip = is_gzip({raw, raw_size});
  if (!f.gzip) {
    f.data = raw_size ? raw : "";
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
  std::optional<uint64_t> cut =
      trace::inflate_gzip(std::string_view(raw, raw_size), path.string(), *text, plausible ? isize : 0);
  m.reset();
  // A truncated stream inflates less than a whole file would; flag it so the message can say why.
  if (cut) f.gzip_cut_at = text->size();
  f.data = text->data();
  f.size = text->size();
  f.owner = text;
  return f;
}

FileText read_text_window(const std::filesystem::path& path) {
  std::shared_ptr<TextWindow> w;
  try {
    w = std::make_shared<TextWindow>(path);
  } catch (const std::system_error&) {
    return read_text(path);  // no memory file or address range: the whole text, as before
  }
  FileText f;
  f.data = w->data(), f.window = w.get(), f.gzip = w->gzip();
  // The size, or a gzip file's likely size until its text is read (the importer reads on to its end).
  f.size = w->whole() ? w->size() : std::max<uint64_t>(w->size_hint(), uint64_t(w->end() - w->data()));
  f.owner = std::move(w);
  return f;
}

}  // namespace shardscope::plugins
