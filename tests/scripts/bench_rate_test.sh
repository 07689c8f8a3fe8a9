#!/usr/bin/env bash
# scripts/bench-rate on made-up GNU time lines ("%e %U %S %M": wall, user, system, peak KB), the expected
# figures worked out here by hand; then scripts/bench-ranks end to end on two 4 MB ranks.
# usage: bench_rate_test.sh SOURCE_DIR SHARDSCOPE
set -uo pipefail
src=$1
bin=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# 700 MB in 2 s wall, 3.0 + 0.5 CPU-seconds on 2 cores (4 CPU-seconds possible): 350 MB/s, 700 / 3.5 = 200.
echo "2.00 3.00 0.50 2048" >"$tmp/ok"
out=$("$src/scripts/bench-rate" "$tmp/ok" --amount 700 --cores 2 2>&1) || bad "a possible timing was refused: $out"
for want in "wall 2.00 s" "CPU 3.50 s (user 3.00, sys 0.50)" "350.0 MB/s wall" "200.0 MB per CPU-second" "peak RSS 2.0 MB"; do
  [[ $out == *"$want"* ]] || bad "missing '$want' in: $out"
done

# The issue's case: 4,100 MB quoted at 736 MB/s (5.57 s) on 2 cores with 23 CPU-seconds: 2 x 5.57 = 11.14 < 23.
echo "5.57 20.00 3.00 2048" >"$tmp/impossible"
out=$("$src/scripts/bench-rate" "$tmp/impossible" --amount 4100 --cores 2 2>&1)
rc=$?
[[ $rc == 3 ]] || bad "an impossible timing exited $rc, not 3: $out"
[[ $(wc -l <<<"$out") == 1 && $out == *"refusing"*"23.00 CPU-seconds cannot fit in 5.57 s wall on 2 cores"* ]] ||
  bad "not the one refusal line: $out"
[[ $out != *"MB/s"* ]] || bad "a refused rate was printed: $out"
# The same time on 8 cores fits (44.56 CPU-seconds possible).
"$src/scripts/bench-rate" "$tmp/impossible" --amount 4100 --cores 8 >/dev/null 2>&1 || bad "23 CPU-s in 5.57 s on 8 cores refused"

# No rate from a run too short to time, and a clear line for a file that is not GNU time's.
echo "0.00 0.00 0.00 1024" >"$tmp/zero"
out=$("$src/scripts/bench-rate" "$tmp/zero" --amount 1 --cores 2 2>&1) && bad "a rate from a zero time: $out"
echo "garbage" >"$tmp/garbage"
out=$("$src/scripts/bench-rate" "$tmp/garbage" 2>&1)
[[ $? == 2 && $out == *"$tmp/garbage"*"not GNU time"* ]] || bad "bad time file: $out"

# End to end: bench-ranks prints CPU-seconds and both rates for each count.
out=$(SHARDSCOPE=$bin "$src/scripts/bench-ranks" "$tmp/gen" 1 2 2>&1) || bad "bench-ranks failed: $out"
for n in 1 2; do
  grep -qE "^$n ranks, [0-9.]+ MB of JSON: wall [0-9.]+ s, CPU [0-9.]+ s \(user [0-9.]+, sys [0-9.]+\)" <<<"$out" ||
    bad "no CPU-seconds line for $n ranks in: $out"
done
exit $fail
