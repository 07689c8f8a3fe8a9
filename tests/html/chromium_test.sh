#!/usr/bin/env bash
# Renders `shardscope report --format html` of two real runs in headless Chromium: the page's text must hold
# the run summary and the prefetch verdict, and Chromium must log no script or console error.
# usage: chromium_test.sh SHARDSCOPE SOURCE_DIR
set -uo pipefail
shardscope=$1 src=$2
browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $browser ]]; then
  echo "SKIPPED: no chromium on PATH; scripts/bootstrap installs Debian's chromium package, which this test needs"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }

# case: run directory, then the lines the rendered page must hold
check() {
  local name=$1 run=$2
  shift 2
  local page=$tmp/$name.html dom=$tmp/$name.dom log=$tmp/$name.log
  if ! SHARDSCOPE_PLUGIN_PATH= "$shardscope" report --format html -o "$page" "$run" 2> "$tmp/$name.err"; then
    fail "$name: shardscope report failed: $(cat "$tmp/$name.err")"
    return
  fi
  timeout 120 "$browser" --headless --disable-gpu --no-sandbox --disable-dev-shm-usage --no-first-run --user-data-dir="$tmp/profile-$name" \
    --enable-logging=stderr --v=0 --dump-dom "file://$page" > "$dom" 2> "$log"
  local rc=$?
  if ((rc != 0)) || [[ ! -s $dom ]]; then
    fail "$name: chromium exited $rc with no page; its log:"
    tail -n 30 "$log"
    return
  fi
  for want in "$@"; do
    grep -qF -- "$want" "$dom" || fail "$name: the rendered page lacks: $want"
  done
  # A script error or any console message (the page has no script: there should be none).
  if grep -E "Uncaught|:CONSOLE\(|console\.(error|warn)|SyntaxError|ReferenceError|TypeError" "$log"; then
    fail "$name: chromium logged the errors above"
  fi
  echo "$name: rendered $(wc -c < "$dom") bytes of DOM from $(wc -c < "$page") bytes of HTML"
}

check cpu_pre "$src/tests/golden/trainer_cpu_2ranks/pre" \
  "shardscope report" "run: 2 ranks" "backward prefetch: effective" "Where the time goes, per rank" "compute only" "Step time, ms" "Stragglers"
check h100_none "$src/tests/data/h100_nccl2/shardscope_train_none" \
  "shardscope report" "run: 2 ranks, 5 steps" "backward prefetch: NOT effective" "most often issued late" "exposed comm" \
  "Exposed communication per step, ms" "the 2 slowest of 5 steps"
exit $status
