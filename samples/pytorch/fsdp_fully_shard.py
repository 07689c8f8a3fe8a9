"""A small FSDP2 training loop (fully_shard) for tracing, unchanged, with libshardscope_inject.so.

It is an ordinary PyTorch program: nothing in it knows about shardscope. See README.md for the two lines that
trace it. A few transformer-like blocks, each its own FSDP unit, plus the root; NCCL on GPUs (Gloo on CPUs,
where the injection library is never loaded because CUDA is never initialized).
"""
import argparse
import contextlib
import os

import torch
import torch.distributed as dist
import torch.nn as nn

try:
    from torch.distributed.fsdp import fully_shard  # torch >= 2.6
except ImportError:  # torch 2.4 and 2.5
    from torch.distributed._composable.fsdp import fully_shard


class Block(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, num_heads=8, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        h = self.norm(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm(x))


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--dim", type=int, default=512)
    p.add_argument("--seq", type=int, default=256)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--steps", type=int, default=10)
    args = p.parse_args()

    cuda = torch.cuda.is_available()
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    if cuda:
        # The first CUDA call: the driver initializes here and loads CUDA_INJECTION64_PATH, after torchrun
        # has set RANK, so the trace file is named by rank.
        torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl" if cuda else "gloo")
    device = torch.device("cuda", local_rank) if cuda else torch.device("cpu")

    torch.manual_seed(0)
    model = nn.Sequential(*[Block(args.dim) for _ in range(args.layers)]).to(device)
    for block in model:
        fully_shard(block)  # one FSDP unit per block: all-gather before, reduce-scatter after
    fully_shard(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

    for step in range(args.steps):
        # An NVTX range per step shows up in the trace (CUPTI's NVTX capture) next to the kernels.
        with torch.cuda.nvtx.range(f"step {step}") if cuda else contextlib.nullcontext():
            x = torch.randn(args.batch, args.seq, args.dim, device=device)
            loss = model(x).float().pow(2).mean()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        if dist.get_rank() == 0:
            print(f"step {step} loss {loss.item():.5f}", flush=True)

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
