// Group on raw Gloo (the CPU backend). c10d's ProcessGroupGloo in libtorch 1.13 has no flat all-gather and no
// reduce-scatter, so: gloo::allgather for all-gathers, a ring reduce-scatter on unbound buffers, and
// gloo::allreduce; only new-style collectives on a context (mixing in the old algorithm classes slows later
// all-gathers on that context a thousandfold).
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/math.h>
#include <gloo/types.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "training/comm/group.h"
#include "training/comm/rendezvous.h"

namespace shardscope::train {

namespace {

// gloo's rendezvous Store over libtorch's TCP store.
class StoreAdapter : public gloo::rendezvous::Store {
 public:
  explicit StoreAdapter(c10d::Store& s) : s_(s) {}
  void set(const std::string& key, const std::vector<char>& data) override {
    s_.set(key, std::vector<uint8_t>(data.begin(), data.end()));
  }
  std::vector<char> get(const std::string& key) override {
    auto v = s_.get(key);
    return {v.begin(), v.end()};
  }
  void wait(const std::vector<std::string>& keys) override { s_.wait(keys); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    s_.wait(keys, timeout);
  }

 private:
  c10d::Store& s_;
};

float bf16_to_f32(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
uint16_t f32_to_bf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits += 0x7fff + ((bits >> 16) & 1);  // round to nearest even
  return uint16_t(bits >> 16);
}

void sum_into(void* acc, const void* x, size_t n, DType dt) {
  if (dt == DType::F32) {
    auto* a = static_cast<float*>(acc);
    auto* b = static_cast<const float*>(x);
    for (size_t i = 0; i < n; ++i) a[i] += b[i];
  } else {
    auto* a = static_cast<uint16_t*>(acc);
    auto* b = static_cast<const uint16_t*>(x);
    for (size_t i = 0; i < n; ++i) a[i] = f32_to_bf16(bf16_to_f32(a[i]) + bf16_to_f32(b[i]));
  }
}

void bf16_sum(void* c, const void* a, const void* b, size_t n) {
  auto* o = static_cast<uint16_t*>(c);
  auto* x = static_cast<const uint16_t*>(a);
  auto* y = static_cast<const uint16_t*>(b);
  for (size_t i = 0; i < n; ++i) o[i] = f32_to_bf16(bf16_to_f32(x[i]) + bf16_to_f32(y[i]));
}

class GlooGroup : public Group {
 public:
  GlooGroup(std::shared_ptr<gloo::Context> ctx, std::chrono::milliseconds timeout)
      : ctx_(std::move(ctx)), timeout_(timeout) {}
  int rank() const override { return ctx_->rank; }
  int size() const override { return ctx_->size; }

  void all_gather(void* out, const void* in, size_t count, DType dt, const Fence&, uint64_t) override {
    if (size() == 1) {
      std::memcpy(out, in, count * dtype_size(dt));
      return;
    }
    gloo::AllgatherOptions o(ctx_);
    if (dt == DType::F32) {
      o.setInput(const_cast<float*>(static_cast<const float*>(in)), count);
      o.setOutput(static_cast<float*>(out), count * size_t(size()));
    } else {
      o.setInput(const_cast<uint16_t*>(static_cast<const uint16_t*>(in)), count);
      o.setOutput(static_cast<uint16_t*>(out), count * size_t(size()));
    }
    o.setTag(next_tag());
    o.setTimeout(timeout_);
    gloo::allgather(o);
  }

  // Ring reduce-scatter: n-1 steps; at step s send the partial sum of chunk (r-s-1) to the right and add
  // the left neighbour's partial of chunk (r-s-2), so rank r ends holding the full sum of chunk r.
  void reduce_scatter(void* out, void* in, size_t count, DType dt, const Fence&, uint64_t) override {
    const int n = size(), r = rank();
    const size_t chunk = count * dtype_size(dt);
    if (n == 1) {
      std::memcpy(out, in, chunk);
      return;
    }
    // Partial sums accumulate in `in` itself; the receive buffer is kept between calls (grown, never shrunk)
    // so a reduce-scatter allocates nothing on the communication thread.
    char* acc = static_cast<char*>(in);
    if (incoming_.size() < chunk) incoming_.resize(chunk);
    char* incoming = incoming_.data();
    auto send_buf = ctx_->createUnboundBuffer(acc, chunk * size_t(n));
    auto recv_buf = ctx_->createUnboundBuffer(incoming, chunk);
    const int right = (r + 1) % n, left = (r - 1 + n) % n;
    const uint32_t tag = next_tag();
    for (int s = 0; s < n - 1; ++s) {
      const int send_chunk = ((r - s - 1) % n + n) % n;
      const int recv_chunk = ((r - s - 2) % n + n) % n;
      const uint64_t slot = uint64_t(gloo::Slot::build(0x5a, tag)) + uint64_t(s);
      send_buf->send(right, slot, size_t(send_chunk) * chunk, chunk);
      recv_buf->recv(left, slot, 0, chunk);
      if (!recv_buf->waitRecv(timeout_))
        throw std::runtime_error("reduce-scatter: receive from rank-in-group " + std::to_string(left) + " timed out");
      if (!send_buf->waitSend(timeout_))
        throw std::runtime_error("reduce-scatter: send to rank-in-group " + std::to_string(right) + " timed out");
      sum_into(acc + size_t(recv_chunk) * chunk, incoming, count, dt);
    }
    std::memcpy(out, acc + size_t(r) * chunk, chunk);
  }

  void all_reduce(void* buf, size_t count, DType dt, const Fence&, uint64_t) override {
    if (size() == 1 || count == 0) return;
    gloo::AllreduceOptions o(ctx_);
    if (dt == DType::F32) {
      o.setOutput(static_cast<float*>(buf), count);
      o.setReduceFunction(static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
    } else {
      o.setOutput(static_cast<uint16_t*>(buf), count);
      o.setReduceFunction(&bf16_sum);
    }
    o.setTag(next_tag());
    o.setTimeout(timeout_);
    gloo::allreduce(o);
  }

 private:
  uint32_t next_tag() { return tag_++; }
  std::shared_ptr<gloo::Context> ctx_;
  std::chrono::milliseconds timeout_;
  uint32_t tag_ = 1;
  std::vector<char> incoming_;  // reduce-scatter's receive buffer
};

}  // namespace

std::unique_ptr<Group> make_gloo_group(Rendezvous& rv, const std::string& name, const std::vector<int>& members,
                                       std::chrono::milliseconds timeout) {
  auto it = std::find(members.begin(), members.end(), rv.env().rank);
  if (it == members.end()) throw std::logic_error("rank is not a member of group " + name);
  int group_rank = int(it - members.begin());
  auto ctx = std::make_shared<gloo::rendezvous::Context>(group_rank, int(members.size()));
  ctx->setTimeout(timeout);
  if (members.size() > 1) {
    gloo::transport::tcp::attr attr;
    attr.hostname = rv.gloo_host();
    auto dev = gloo::transport::tcp::CreateDevice(attr);
    StoreAdapter adapter(rv.store());
    gloo::rendezvous::PrefixStore prefixed("shardscope/gloo/" + name, adapter);
    ctx->connectFullMesh(prefixed, dev);
  }
  return std::make_unique<GlooGroup>(std::move(ctx), timeout);
}

}  // namespace shardscope::train
