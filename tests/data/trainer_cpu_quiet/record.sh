#!/bin/bash
# Records the quiet CPU runs in this folder: three rounds (a, b, c), each the trainer's backward prefetch pre,
# none, post and pre again, then --limit-all-gathers 1 and 2, one run after the other, 2 ranks on Gloo.
# Usage: tests/data/trainer_cpu_quiet/record.sh BUILD_DIR OUT_DIR   (run it on a machine with nothing else busy;
# each run's load average is written to OUT_DIR/load.txt beside it, so the quiet is on record, not assumed)
set -euo pipefail
build=$(realpath "$1") out=$2
mkdir -p "$out"
run() {  # run NAME FLAGS...
  local dir=$out/$1; shift
  rm -rf "$dir"
  "$build/analyzer/shardscope" launch -n 2 -- "$build/training/shardscope-train" --preset tiny --steps 12 \
    --sharding full_shard --threads 1 --trace-dir "$dir" "$@" >/dev/null
  echo "$(date -u +%FT%TZ) ${dir#"$out"/} load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/load.txt"
}
for round in a b c; do
  run "$round/pre" --backward-prefetch pre
  run "$round/none" --backward-prefetch none
  run "$round/post" --backward-prefetch post
  run "$round/pre_again" --backward-prefetch pre
  run "$round/limit1" --backward-prefetch pre --limit-all-gathers 1
  run "$round/limit2" --backward-prefetch pre --limit-all-gathers 2
done
