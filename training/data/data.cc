#include "training/data/data.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace shardscope::train {
namespace {

uint64_t mix(uint64_t a, uint64_t b) {  // splitmix64 of a combination: a cheap, well-spread per-sample seed
  uint64_t z = a * 0x9e3779b97f4a7c15ULL + b + 0x632be59bd9b4e019ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

class Synthetic : public DataSource {
 public:
  Synthetic(int64_t vocab, int64_t seq, uint64_t seed) : vocab_(vocab), seq_(seq), seed_(seed) {}
  void batch(int64_t step, int64_t first, int64_t count, torch::Tensor& tokens, torch::Tensor& targets) override {
    auto all = torch::empty({count, seq_ + 1}, torch::kInt64);
    auto a = all.accessor<int64_t, 2>();
    for (int64_t i = 0; i < count; ++i) {
      uint64_t h = mix(mix(seed_, uint64_t(step)), uint64_t(first + i));
      int64_t start = int64_t(h % uint64_t(vocab_)), stride = 1 + int64_t((h >> 32) % 7);
      for (int64_t k = 0; k <= seq_; ++k) a[i][k] = (start + k * stride) % vocab_;
    }
    tokens = all.narrow(1, 0, seq_).contiguous();
    targets = all.narrow(1, 1, seq_).contiguous();
  }

 private:
  int64_t vocab_, seq_;
  uint64_t seed_;
};

class TextBytes : public DataSource {
 public:
  TextBytes(std::string bytes, int64_t seq, uint64_t seed) : text_(std::move(bytes)), seq_(seq), seed_(seed) {}
  void batch(int64_t step, int64_t first, int64_t count, torch::Tensor& tokens, torch::Tensor& targets) override {
    auto all = torch::empty({count, seq_ + 1}, torch::kInt64);
    auto a = all.accessor<int64_t, 2>();
    const uint64_t windows = uint64_t(text_.size()) - uint64_t(seq_);
    for (int64_t i = 0; i < count; ++i) {
      uint64_t off = mix(mix(seed_, uint64_t(step)), uint64_t(first + i)) % windows;
      for (int64_t k = 0; k <= seq_; ++k) a[i][k] = int64_t(uint8_t(text_[off + uint64_t(k)]));
    }
    tokens = all.narrow(1, 0, seq_).contiguous();
    targets = all.narrow(1, 1, seq_).contiguous();
  }

 private:
  std::string text_;
  int64_t seq_;
  uint64_t seed_;
};

// The whole file, when it is a regular one. Opened without blocking and checked on the open descriptor: a FIFO
// would wait for a writer, a device (/dev/zero) never ends, a folder cannot be read.
std::string read_regular_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw std::invalid_argument("--data " + path + ": cannot open the file (" + std::strerror(errno) + ")");
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    throw std::invalid_argument("--data " + path + ": cannot read the file (" + std::strerror(errno) + ")");
  if (!S_ISREG(st.st_mode)) {
    const char* kind = S_ISDIR(st.st_mode)    ? "a folder"
                       : S_ISFIFO(st.st_mode) ? "a FIFO"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "a device";
    throw std::invalid_argument("--data " + path + " is " + kind + ", not a regular file");
  }
  std::string text(size_t(st.st_size), '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::invalid_argument("--data " + path + ": cannot read the file (" + std::strerror(errno) + ")");
    if (n == 0) break;  // shrank while read: what is there
    got += size_t(n);
  }
  text.resize(got);
  return text;
}

}  // namespace

std::unique_ptr<DataSource> make_data(const std::string& spec, int64_t vocab, int64_t seq_len, uint64_t seed) {
  if (spec == "synthetic") return std::make_unique<Synthetic>(vocab, seq_len, seed);
  std::string text = read_regular_file(spec);
  if (int64_t(text.size()) <= seq_len + 1)
    throw std::invalid_argument("--data " + spec + ": " + std::to_string(text.size()) +
                                " bytes is shorter than one sample (seq-len + 1)");
  if (vocab < 256) throw std::invalid_argument("--data with a text file needs --vocab >= 256 (byte tokens)");
  return std::make_unique<TextBytes>(std::move(text), seq_len, seed);
}

}  // namespace shardscope::train
