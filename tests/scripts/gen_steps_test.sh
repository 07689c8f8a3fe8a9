#!/usr/bin/env bash
# scripts/gen-kineto-traces closes a ProfilerStep#N every 256 kB of events, so even a 1 MB rank has steps for
# `shardscope report`'s per-step analysis: at least 3 (1,000,000 / 256,000, less the one left open), and the
# report's step count is the number of ProfilerStep ranges the file holds.
# usage: gen_steps_test.sh SOURCE_DIR SHARDSCOPE
set -uo pipefail
src=$1
bin=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$src/scripts/gen-kineto-traces" "$tmp/set" --ranks 1 --mb-per-rank 1 || exit 1
steps=$(grep -o '"name": "ProfilerStep#[0-9]*"' "$tmp/set/rank0.pt.trace.json" | sort -u | wc -l)
((steps >= 3)) || { echo "FAIL: $steps ProfilerStep ranges in a 1 MB rank, want at least 3"; exit 1; }
out=$("$bin" report "$tmp/set" -q 2>&1) || { echo "FAIL: report failed: $out"; exit 1; }
grep -q "run: 1 rank, $steps steps" <<<"$out" || { echo "FAIL: report does not see $steps steps:"; head -3 <<<"$out"; exit 1; }
grep -q "per step (" <<<"$out" || { echo "FAIL: no per-step table"; exit 1; }
echo "ok: $steps steps"
