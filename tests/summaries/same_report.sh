#!/usr/bin/env bash
# Summaries stand in for traces: for every golden case and every real trace set in tests/data, the report
# (JSON, every number), check-prefetch and diff made from `shardscope summarize`'s files equal those made
# from the traces, apart from the input paths they name. And a summary of a trace of 1 MB or more of text is
# at most 2 % of it.
# usage: same_report.sh SHARDSCOPE SOURCE_DIR
set -uo pipefail
bin=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

no_inputs() { sed '/"inputs": \[/,/\]/d' "$1"; }
no_header() { sed 1d "$1"; }

# same DIR RUN: RUN (relative to DIR) summarised into $tmp/RUN, then both compared.
n=0
same() {
  n=$((n + 1))
  local dir=$1 run=$2 out="$tmp/summaries$n"
  (cd "$dir" && "$bin" summarize "$run" -o "$out" >"$tmp/summarize.out" 2>"$tmp/summarize.err") || {
    echo "FAIL: summarize $dir/$run: $(cat "$tmp/summarize.err")"
    fail=1
    return
  }
  (cd "$dir" && "$bin" report "$run" --format json >"$tmp/a.json" 2>"$tmp/a.err"; "$bin" report "$out" --format json >"$tmp/b.json" 2>"$tmp/b.err")
  if ! diff <(no_inputs "$tmp/a.json") <(no_inputs "$tmp/b.json") >"$tmp/d"; then
    echo "FAIL: report --format json of $dir/$run differs from its summaries':"; head -20 "$tmp/d"; fail=1
  fi
  diff "$tmp/a.err" "$tmp/b.err" >/dev/null || { echo "FAIL: warnings of $dir/$run differ from its summaries'"; diff "$tmp/a.err" "$tmp/b.err" | head; fail=1; }
  # --no-whatif: the what-if replay needs the events, which summaries do not keep (its line says so there).
  (cd "$dir" && "$bin" check-prefetch --no-whatif "$run" >"$tmp/a.txt" 2>&1; echo "rc=$?" >>"$tmp/a.txt"; "$bin" check-prefetch --no-whatif "$out" >"$tmp/b.txt" 2>&1; echo "rc=$?" >>"$tmp/b.txt")
  diff "$tmp/a.txt" "$tmp/b.txt" >/dev/null || { echo "FAIL: check-prefetch of $dir/$run differs from its summaries'"; diff "$tmp/a.txt" "$tmp/b.txt" | head; fail=1; }
  # Size: bytes of trace text (summarize prints them) against the summaries' bytes on disk.
  local text summaries
  text=$(sed -n 's/.*from \([0-9.]*\) MB of trace text.*/\1/p' "$tmp/summarize.out")
  summaries=$(du -cb "$out"/*.sqlite | tail -1 | cut -f1)
  if awk -v t="$text" -v s="$summaries" 'BEGIN { exit !(t >= 1 && s > 0.02 * t * 1e6) }'; then
    echo "FAIL: $dir/$run's summaries take $summaries bytes for $text MB of trace text (over 2 %)"; fail=1
  fi
  echo "ok: $dir/$run ($text MB of text, $summaries bytes of summaries)"
}

same "$src/tests/golden/trainer_cpu_2ranks" pre
same "$src/tests/golden/trainer_cpu_2ranks" none
same "$src/tests/golden/kineto_two_ranks" .
same "$src/tests/golden/kineto_seq_pairing" .
same "$src/tests/golden/moe_deepep" .
for d in "$src"/tests/data/h100_nccl2/*/ "$src"/tests/data/hta_trace_diff/*/; do same "$(dirname "$d")" "$(basename "$d")"; done
same "$src/tests/data" hta_nccl_parser_config
same "$src/tests/data" hta_trace_filter
same "$src/tests/data" tracelens_b200

# diff from summaries: the trainer's none and pre runs (summarised first and second above).
g="$src/tests/golden/trainer_cpu_2ranks"
(cd "$g" && "$bin" diff none pre >"$tmp/a.diff" 2>&1; "$bin" diff "$tmp/summaries2" "$tmp/summaries1" >"$tmp/b.diff" 2>&1)
if ! diff <(no_header "$tmp/a.diff") <(no_header "$tmp/b.diff") >"$tmp/d"; then
  echo "FAIL: diff none pre differs from the diff of their summaries:"; head -20 "$tmp/d"; fail=1
fi
exit $fail
