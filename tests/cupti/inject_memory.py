"""Runs under the injection library (CUDA_INJECTION64_PATH): a few AdamW steps of an MLP through PyTorch's
caching allocator, then one last allocation, the program's fullest moment. Prints, as JSON, what PyTorch and
the driver say then: the device's used memory and the caching allocator's reserved bytes, for
gpu_device_memory.sh to hold shardscope's report to."""
import json
import torch

dev = torch.device("cuda")
model = torch.nn.Sequential(*[torch.nn.Linear(4096, 4096) for _ in range(8)]).to(dev)
opt = torch.optim.AdamW(model.parameters())
x = torch.randn(256, 4096, device=dev)
for _ in range(3):
    model(x).square().mean().backward()
    opt.step()
    opt.zero_grad(set_to_none=False)
torch.cuda.synchronize()
keep = torch.empty(512 << 20, dtype=torch.uint8, device=dev)  # a fresh segment: the last cudaMalloc
torch.cuda.synchronize()
free, total = torch.cuda.mem_get_info()
print(json.dumps({"device_used_bytes": total - free, "reserved_bytes": torch.cuda.memory_reserved(),
                  "allocated_bytes": torch.cuda.memory_allocated(), "torch": torch.__version__}))
