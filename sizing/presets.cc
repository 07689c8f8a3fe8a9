#include "sizing/presets.h"

#include "tracer/format/keys.h"

#include <stdexcept>

namespace shardscope::sizing {

ModelConfig preset(const std::string& name) {
  ModelConfig c;
  c.preset = name;
  if (name == "tiny") {
    c.layers = 4, c.dim = 128, c.heads = 4, c.kv_heads = 4, c.ffn_dim = 344, c.vocab = 256, c.seq_len = 64;
  } else if (name == "small") {
    c.layers = 12, c.dim = 768, c.heads = 12, c.kv_heads = 12, c.ffn_dim = 2048, c.vocab = 32000, c.seq_len = 256;
  } else if (name == "1b") {
    c.layers = 16, c.dim = 2048, c.heads = 16, c.kv_heads = 16, c.ffn_dim = 5632, c.vocab = 32000, c.seq_len = 2048;
  } else if (name == "8b") {
    c.layers = 32, c.dim = 4096, c.heads = 32, c.kv_heads = 8, c.ffn_dim = 14336, c.vocab = 128256, c.seq_len = 8192;
  } else {
    throw std::invalid_argument("unknown preset '" + name + "' (tiny, small, 1b, 8b)");
  }
  return c;
}

void validate(const ModelConfig& c) {
  auto need = [](bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument(what);
  };
  need(c.layers >= 1, "--layers must be at least 1");
  need(c.dim >= 2, "--dim must be at least 2");
  need(c.heads >= 1 && c.dim % c.heads == 0, "--dim must be a multiple of --heads");
  need(c.head_dim() % 2 == 0, "--dim / --heads must be even (rotary embeddings rotate pairs)");
  need(c.kv_heads >= 1 && c.heads % c.kv_heads == 0, "--heads must be a multiple of --kv-heads");
  need(c.ffn_dim >= 1, "--ffn-dim must be at least 1");
  need(c.vocab >= 2, "--vocab must be at least 2");
  need(c.seq_len >= 2, "--seq-len must be at least 2");
}

namespace {
void add(UnitLayout& u, std::string name, std::vector<int64_t> shape, bool norm = false) {
  ParamSpec p{std::move(name), std::move(shape), u.numel, norm};
  u.numel += p.numel();
  u.params.push_back(std::move(p));
}
}  // namespace

std::vector<UnitLayout> unit_layouts(const ModelConfig& c) {
  std::vector<UnitLayout> units;
  UnitLayout root{keys::kRootUnit, "root", {}, 0};
  add(root, "tok_embedding", {c.vocab, c.dim});
  add(root, "final_norm", {c.dim}, true);
  add(root, "lm_head", {c.vocab, c.dim});
  units.push_back(std::move(root));
  for (int64_t l = 0; l < c.layers; ++l) {
    UnitLayout b{int(l + 1), "block" + std::to_string(l), {}, 0};
    add(b, "attn_norm", {c.dim}, true);
    add(b, "wq", {c.dim, c.dim});
    add(b, "wk", {c.kv_dim(), c.dim});
    add(b, "wv", {c.kv_dim(), c.dim});
    add(b, "wo", {c.dim, c.dim});
    add(b, "mlp_norm", {c.dim}, true);
    add(b, "w1", {c.ffn_dim, c.dim});
    add(b, "w3", {c.ffn_dim, c.dim});
    add(b, "w2", {c.dim, c.ffn_dim});
    units.push_back(std::move(b));
  }
  return units;
}

int64_t parameter_count(const ModelConfig& c) {
  int64_t n = 0;
  for (const UnitLayout& u : unit_layouts(c)) n += u.numel;
  return n;
}

}  // namespace shardscope::sizing

namespace shardscope::sizing {

std::optional<ShapeCounts> checked_counts(const ModelConfig& c) {
  bool overflow = false;
  auto mul = [&](int64_t a, int64_t b) {
    int64_t r = 0;
    overflow |= __builtin_mul_overflow(a, b, &r);
    return r;
  };
  auto add = [&](int64_t a, int64_t b) {
    int64_t r = 0;
    overflow |= __builtin_add_overflow(a, b, &r);
    return r;
  };
  // The shapes unit_layouts() lays out, term by term.
  const int64_t dd = mul(c.dim, c.dim), kv = mul(mul(c.kv_heads, c.head_dim()), c.dim), fd = mul(c.ffn_dim, c.dim);
  ShapeCounts n;
  n.root = add(mul(2, mul(c.vocab, c.dim)), c.dim);
  n.block = add(add(mul(2, c.dim), mul(2, dd)), add(mul(2, kv), mul(3, fd)));
  n.total = add(n.root, mul(c.layers, n.block));
  if (overflow) return std::nullopt;
  return n;
}

}  // namespace shardscope::sizing
