#!/usr/bin/env python3
"""A real 2-rank DDP run over Gloo, recorded by PyTorch's legacy (CPU) autograd profiler.

Made with Debian 12's python3-torch 1.13.1 (CPU only: no Kineto, no CUDA), which writes the Chrome trace's
JSON Array Format: a bare list of events whose pid is "CPU functions". Its FSDP does not import on Python
3.11, so DDP is what this torch can shard; its profiler records no memory events.

Usage: make_trace.py OUT_DIR  (writes trace.rank0.json.gz and trace.rank1.json.gz; about 10 s on 2 cores)
"""
import gzip
import os
import shutil
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP

STEPS = 4  # step 0 is warm-up


def rank_main(rank, world, out_dir, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    model = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 256))
    # Small buckets: several all-reduces a step, each overlapping the rest of backward as DDP schedules them.
    ddp = DDP(model, bucket_cap_mb=1)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    data = torch.randn(64, 256, generator=torch.Generator().manual_seed(rank))
    with torch.autograd.profiler.profile(use_kineto=False) as prof:
        for step in range(STEPS):
            with torch.autograd.profiler.record_function(f"ProfilerStep#{step}"):
                opt.zero_grad()
                loss = ddp(data).pow(2).mean()
                loss.backward()
                opt.step()
    path = os.path.join(out_dir, f"trace.rank{rank}.json")
    prof.export_chrome_trace(path)
    with open(path, "rb") as src, open(path + ".gz", "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as dst:  # no timestamp: the same run, the same bytes
            shutil.copyfileobj(src, dst)
    os.remove(path)
    dist.destroy_process_group()


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    mp.spawn(rank_main, args=(2, out, 29611), nprocs=2, join=True)
