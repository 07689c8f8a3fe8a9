"""PyTorch FSDP2 (fully_shard) reference for shardscope-train's presets: the same decoder block
(RMSNorm, RoPE, causal attention, SwiGLU), one FSDP unit per block plus the root, AdamW.
Prints the median step time and tokens/s over steps 2..N (--times FILE: every step's seconds, one a line). Run
with the torchrun env set (1 rank is fine); scripts/gpu-bench-trainer runs it beside shardscope-train.
A measuring stick, not part of shardscope."""
import argparse, os, statistics, time
import torch, torch.nn as nn, torch.nn.functional as F
import torch.distributed as dist
from torch.distributed.fsdp import fully_shard, MixedPrecisionPolicy

PRESETS = {"small": (12, 768, 12, 2048, 32000, 256), "1b": (16, 2048, 16, 5632, 32000, 2048)}

class RMSNorm(nn.Module):
    def __init__(s, d): super().__init__(); s.w = nn.Parameter(torch.ones(d))
    def forward(s, x):
        xf = x.float(); return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).type_as(x) * s.w

def rope(x):
    b, t, h, d = x.shape
    inv = 10000.0 ** (-torch.arange(0, d, 2, device=x.device, dtype=torch.float32) / d)
    ang = torch.outer(torch.arange(t, device=x.device, dtype=torch.float32), inv)
    cos, sin = ang.cos().view(1, t, 1, d // 2).to(x.dtype), ang.sin().view(1, t, 1, d // 2).to(x.dtype)
    p = x.view(b, t, h, d // 2, 2); a, c = p[..., 0], p[..., 1]
    return torch.stack([a * cos - c * sin, a * sin + c * cos], -1).view(x.shape)

class Block(nn.Module):
    def __init__(s, dim, heads, ffn, attn):
        super().__init__(); s.h, s.attn = heads, attn
        s.an, s.mn = RMSNorm(dim), RMSNorm(dim)
        s.wq, s.wk, s.wv, s.wo = (nn.Linear(dim, dim, bias=False) for _ in range(4))
        s.w1, s.w3 = nn.Linear(dim, ffn, bias=False), nn.Linear(dim, ffn, bias=False)
        s.w2 = nn.Linear(ffn, dim, bias=False)
    def forward(s, x):
        b, t, d = x.shape; hd = d // s.h; h = s.an(x)
        q = rope(s.wq(h).view(b, t, s.h, hd)).transpose(1, 2)
        k = rope(s.wk(h).view(b, t, s.h, hd)).transpose(1, 2)
        v = s.wv(h).view(b, t, s.h, hd).transpose(1, 2)
        if s.attn == "sdpa":
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            sc = (q @ k.transpose(-2, -1)) / hd ** 0.5
            sc = sc.masked_fill(torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1), float("-inf"))
            a = torch.softmax(sc.float(), -1).to(v.dtype) @ v
        x = x + s.wo(a.transpose(1, 2).reshape(b, t, d)); m = s.mn(x)
        return x + s.w2(F.silu(s.w1(m)) * s.w3(m))

class Model(nn.Module):
    def __init__(s, L, dim, heads, ffn, vocab, attn):
        super().__init__(); s.emb = nn.Embedding(vocab, dim)
        s.blocks = nn.ModuleList(Block(dim, heads, ffn, attn) for _ in range(L))
        s.norm, s.head = RMSNorm(dim), nn.Linear(dim, vocab, bias=False)
    def forward(s, tok):
        h = s.emb(tok)
        for b in s.blocks: h = b(h)
        return s.head(s.norm(h))

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="1b"); ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--batch-size", type=int, default=4); ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--attn", default="sdpa"); ap.add_argument("--profile", default="")
    ap.add_argument("--times", default="")
    a = ap.parse_args()
    dist.init_process_group("nccl"); rank = dist.get_rank(); torch.cuda.set_device(rank % torch.cuda.device_count())
    L, dim, heads, ffn, vocab, seq = PRESETS[a.preset]
    torch.manual_seed(0)
    m = Model(L, dim, heads, ffn, vocab, a.attn).cuda()
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.bfloat16) if a.dtype == "bf16" else MixedPrecisionPolicy()
    for b in m.blocks: fully_shard(b, mp_policy=mp)
    fully_shard(m, mp_policy=mp)
    opt = torch.optim.AdamW(m.parameters(), lr=3e-3)
    tok = torch.randint(0, vocab, (a.batch_size, seq + 1), device="cuda")
    prof = None
    if a.profile:
        prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA])
        prof.__enter__()
    times = []
    for step in range(a.steps):
        torch.cuda.synchronize(); t0 = time.perf_counter()
        logits = m(tok[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, vocab).float(), tok[:, 1:].reshape(-1))
        loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
        if prof: prof.step()
        torch.cuda.synchronize(); times.append(time.perf_counter() - t0)
    if prof:
        prof.__exit__(None, None, None); prof.export_chrome_trace(a.profile)
    if a.times:
        with open(a.times, "w") as f: f.write("".join(f"{t}\n" for t in times))
    med = statistics.median(times[2:]); toks = a.batch_size * seq * dist.get_world_size()
    print(f"fsdp2 {a.preset} {a.dtype} {a.attn} profile={'yes' if a.profile else 'no'}: median step {med*1e3:.1f} ms, "
          f"{toks/med:.0f} tokens/s, peak {torch.cuda.max_memory_allocated()/2**30:.2f} GiB, last loss {loss.item():.4f}")
    dist.destroy_process_group()

if __name__ == "__main__":
    main()
