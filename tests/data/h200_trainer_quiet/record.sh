#!/bin/bash
# Records the quiet GPU runs in this folder: two rounds (a, b), each the trainer's backward prefetch pre, none
# and pre again, then --limit-all-gathers 1 and 2 (prefetch pre), one run after the other; 2 NCCL ranks share
# one GPU (NCCL_HOSTID differs per rank, so NCCL takes them for two hosts and talks over loopback sockets).
# Usage: tests/data/h200_trainer_quiet/record.sh BUILD_DIR OUT_DIR   on a GPU machine with nothing else running
# (scripts/gpu-build makes BUILD_DIR there). Each run's load and the GPU's use are written to OUT_DIR/load.txt,
# the GPU and driver to OUT_DIR/env.txt. SHAPE and DEVICE override the model and device (a dry run on CPU:
# DEVICE=cpu SHAPE="--preset tiny").
set -euo pipefail
build=$(realpath "$1") out=$2
device=${DEVICE:-cuda}
read -r -a shape <<<"${SHAPE:---preset small --layers 4 --seq-len 1024 --batch-size 8}"
mkdir -p "$out/logs"
gpu() { nvidia-smi --query-gpu="$1" --format=csv,noheader 2>/dev/null | head -1 || echo n/a; }
{ echo "gpu: $(gpu name,driver_version)"; echo "cpus: $(nproc)"; echo "recorded: $(date -u +%FT%TZ)"
  echo "shape: ${shape[*]} --steps 8 --sharding full_shard --device $device"; } >"$out/env.txt"
run() {  # run NAME FLAGS...
  local name=$1 dir=$out/$1; shift
  rm -rf "$dir"
  NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1 timeout 120 "$build/analyzer/shardscope" launch -n 2 -- \
    bash -c 'NCCL_HOSTID=h$RANK exec "$0" "$@"' "$build/training/shardscope-train" --device "$device" "${shape[@]}" \
    --steps 8 --sharding full_shard --trace-dir "$dir" "$@" >"$out/logs/${name//\//_}.log" 2>&1
  echo "$(date -u +%FT%TZ) $name load $(cut -d' ' -f1-3 /proc/loadavg) gpu-util $(gpu utilization.gpu)" >>"$out/load.txt"
}
for round in a b; do
  run "$round/pre" --backward-prefetch pre
  run "$round/none" --backward-prefetch none
  run "$round/pre_again" --backward-prefetch pre
  run "$round/limit1" --backward-prefetch pre --limit-all-gathers 1
  run "$round/limit2" --backward-prefetch pre --limit-all-gathers 2
done
