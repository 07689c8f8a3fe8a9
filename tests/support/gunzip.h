// A gzip file's or string's inflated bytes, for tests that write a trace out piece by piece as a running job
// would. Grows its buffer as needed: a test's file is never cut short silently.
#pragma once

#include <zlib.h>

#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

namespace shardscope::test {

inline std::string gunzip(const std::string& gz) {
  std::string out(gz.size() * 4 + 4096, '\0');
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) throw std::runtime_error("gunzip: inflateInit2");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  z.avail_in = unsigned(gz.size());
  int rc = Z_OK;
  while (rc == Z_OK) {
    if (z.total_out == out.size()) out.resize(out.size() * 2);
    z.next_out = reinterpret_cast<Bytef*>(out.data() + z.total_out);
    z.avail_out = unsigned(out.size() - z.total_out);
    rc = inflate(&z, Z_NO_FLUSH);
  }
  out.resize(z.total_out);
  inflateEnd(&z);
  if (rc != Z_STREAM_END) throw std::runtime_error("gunzip: not a whole gzip stream");
  return out;
}

inline std::string gunzip_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return gunzip(std::string((std::istreambuf_iterator<char>(in)), {}));
}

}  // namespace shardscope::test
