#!/bin/bash
# On a GPU (exit 77 without one, or without PyTorch for CUDA): the device's used memory sampled beside the
# allocator's, in the trainer's and the injection library's traces.
#   trainer, 1 rank: the report splits what no category counts three ways, outside_allocator is positive and the
#     rows add up to the device's used memory within 1 %;
#   an unmodified PyTorch program under the injection library: the report's device total and reserved bytes at
#     the fullest moment equal what the driver and PyTorch said then (inject_memory.py), within 1 %.
# Usage: gpu_device_memory.sh BUILD_DIR [OUT_DIR]   (OUT_DIR keeps the traces and reports; a temporary one
# otherwise). tests/data/h200_device_memory holds a run of it.
set -euo pipefail
build=$(realpath "$1") out=${2:-$(mktemp -d)} here=$(dirname "$(realpath "$0")")
nvidia-smi -L >/dev/null 2>&1 || { echo "no GPU (nvidia-smi -L fails): skipped"; exit 77; }
python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null ||
  { echo "no PyTorch with CUDA: skipped"; exit 77; }
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$out/env.txt"
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' >>"$out/env.txt"
date -u +%FT%TZ >>"$out/env.txt"

rm -rf "$out/trainer" "$out/inject"
NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1 timeout 300 "$build/analyzer/shardscope" launch -n 1 -- \
  "$build/training/shardscope-train" --device cuda --preset small --layers 4 --seq-len 512 --batch-size 4 \
  --steps 4 --sharding full_shard --trace-dir "$out/trainer" >"$out/trainer.log" 2>&1 || { cat "$out/trainer.log"; exit 1; }
"$build/analyzer/shardscope" report "$out/trainer" --format json >"$out/trainer_report.json"

CUDA_INJECTION64_PATH="$build/tracer/inject/libshardscope_inject.so" SHARDSCOPE_OUT="$out/inject" RANK=0 \
  timeout 300 python3 "$here/inject_memory.py" >"$out/inject_truth.json" 2>"$out/inject.log" || { cat "$out/inject.log"; exit 1; }
"$build/analyzer/shardscope" report "$out/inject" --format json >"$out/inject_report.json"

python3 "$here/check_device_memory.py" "$out"
