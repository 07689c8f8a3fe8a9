"""A real PyTorch memory capture for shardscope's tests: 2 NCCL ranks on one GPU, torch.profiler with
profile_memory=True, a small decoder model, 5 profiled steps. Writes per rank a Kineto trace and the truth the
program knows (its configuration and torch.cuda's own counters per step) to compare shardscope's inferences with.

Run on a GPU machine (PyTorch 2.x, NCCL), from any folder:
  torchrun --standalone --nproc-per-node 2 make_trace.py --mode fsdp2 --out OUT/fsdp2
  modes: fsdp2 (fully_shard, fp32), fsdp2_sgo (reshard_after_forward=False, bf16 parameters; profiler window
  starts at step 2 so the optimizer state is allocated before it), ddp (DistributedDataParallel, fp32).
Two ranks on one GPU: NCCL allows it when each rank has its own NCCL_HOSTID (it then uses sockets over loopback).
"""
import argparse, json, os
import torch, torch.nn as nn, torch.nn.functional as F, torch.distributed as dist

ap = argparse.ArgumentParser()
ap.add_argument("--mode", default="fsdp2", choices=["fsdp2", "fsdp2_sgo", "ddp"])
ap.add_argument("--out", required=True)
ap.add_argument("--layers", type=int, default=4)
ap.add_argument("--dim", type=int, default=512)
ap.add_argument("--vocab", type=int, default=8192)
ap.add_argument("--batch", type=int, default=4)
ap.add_argument("--seq", type=int, default=512)
a = ap.parse_args()
os.environ.setdefault("NCCL_HOSTID", "host%s" % os.environ.get("RANK", "0"))
os.environ.setdefault("NCCL_SOCKET_IFNAME", "lo")
os.environ.setdefault("NCCL_IB_DISABLE", "1")


class Block(nn.Module):
    def __init__(self, d, heads=8):
        super().__init__()
        self.heads = heads
        self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d, bias=False), nn.Linear(d, d, bias=False)
        self.up, self.down = nn.Linear(d, 4 * d, bias=False), nn.Linear(4 * d, d, bias=False)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(self.n1(x)).view(b, s, 3, self.heads, d // self.heads).transpose(1, 3).unbind(2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, s, d)
        x = x + self.proj(y)
        return x + self.down(F.gelu(self.up(self.n2(x))))


class Model(nn.Module):
    def __init__(self, layers, d, vocab):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList(Block(d) for _ in range(layers))
        self.norm, self.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)

    def forward(self, t):
        x = self.emb(t)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm(x))


dist.init_process_group("nccl")
rank, world = dist.get_rank(), dist.get_world_size()
torch.cuda.set_device(0)
torch.manual_seed(0)
m = Model(a.layers, a.dim, a.vocab).cuda()
n_params = sum(p.numel() for p in m.parameters())
if a.mode.startswith("fsdp2"):
    from torch.distributed.fsdp import fully_shard, MixedPrecisionPolicy
    from torch.distributed.device_mesh import init_device_mesh
    mesh = init_device_mesh("cuda", (world,), mesh_dim_names=("dp",))
    sgo = a.mode == "fsdp2_sgo"
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32) if sgo else MixedPrecisionPolicy()
    for b in m.blocks:
        fully_shard(b, mesh=mesh, reshard_after_forward=not sgo, mp_policy=mp)
    fully_shard(m, mesh=mesh, reshard_after_forward=not sgo, mp_policy=mp)
    sharding, dtype = ("SHARD_GRAD_OP", "bf16") if sgo else ("FULL_SHARD", "fp32")
else:
    m = nn.parallel.DistributedDataParallel(m, device_ids=[0])
    sharding, dtype = "NO_SHARD", "fp32"
opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
tok = torch.randint(0, a.vocab, (a.batch, a.seq + 1), device="cuda")
first = 2 if a.mode == "fsdp2_sgo" else 0  # a window after warm-up steps, as most users record
sched = torch.profiler.schedule(wait=first, warmup=0, active=5, repeat=1)
os.makedirs(a.out, exist_ok=True)
steps = []


def ready(p):
    p.export_chrome_trace(os.path.join(a.out, f"rank{rank}.json"))


acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
with torch.profiler.profile(activities=acts, schedule=sched, on_trace_ready=ready, profile_memory=True,
                            record_shapes=True) as prof:
    for step in range(first + 5):
        torch.cuda.reset_peak_memory_stats()
        loss = F.cross_entropy(m(tok[:, :-1]).reshape(-1, a.vocab).float(), tok[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad()
        torch.cuda.synchronize()
        free, total = torch.cuda.mem_get_info()
        steps.append({"step": step, "profiled": step >= first, "loss": round(loss.item(), 5),
                      "peak_allocated": torch.cuda.max_memory_allocated(),
                      "peak_reserved": torch.cuda.max_memory_reserved(),
                      "allocated_at_end": torch.cuda.memory_allocated(),
                      "reserved_at_end": torch.cuda.memory_reserved(),
                      "device_used_both_ranks": total - free})
        prof.step()
truth = {"mode": a.mode, "world_size": world, "rank": rank, "sharding": sharding, "param_dtype": dtype,
         "optimizer": "AdamW", "parameters": n_params, "parameter_bytes_fp32": 4 * n_params,
         "layers": a.layers, "hidden": a.dim, "vocab": a.vocab, "micro_batch": a.batch, "seq_len": a.seq,
         "torch": torch.__version__, "device": torch.cuda.get_device_name(0), "steps": steps}
with open(os.path.join(a.out, f"rank{rank}_truth.json"), "w") as f:
    json.dump(truth, f, indent=1)
print(f"rank {rank} {a.mode}: {n_params} parameters, loss {steps[-1]['loss']}, "
      f"peak allocated {steps[-1]['peak_allocated'] / 2**20:.1f} MiB")
dist.destroy_process_group()
