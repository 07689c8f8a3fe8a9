#!/usr/bin/env bash
# One golden ("diff") test: runs `shardscope <args>` inside the case's folder, where <args> is the first
# line of NAME.args, and compares stdout, stderr and the exit status with NAME.out exactly.
# usage: run_case.sh SHARDSCOPE CASE_DIR NAME [--update]
set -uo pipefail
shardscope=$1 dir=$2 name=$3 mode=${4:-}
cd "$dir" || exit 2
read -r -a args < "$name.args"
actual=$(mktemp)
trap 'rm -f "$actual"' EXIT
{
  out=$(SHARDSCOPE_PLUGIN_PATH= "$shardscope" "${args[@]}" 2> "$actual.err"); rc=$?
  printf '%s\n' "$out"
  echo "--- stderr"
  cat "$actual.err"
  echo "--- exit $rc"
} > "$actual"
rm -f "$actual.err"
if [[ $mode == --update ]]; then
  cp "$actual" "$name.out"
  echo "updated $dir/$name.out"
  exit 0
fi
if ! diff -u "$name.out" "$actual" > "$actual.diff"; then
  echo "golden test $dir/$name: output differs from $name.out (- expected, + actual):"
  head -c 20000 "$actual.diff"
  echo
  echo "If the change is intended: scripts/update-golden, then review the diff in git."
  rm -f "$actual.diff"
  exit 1
fi
rm -f "$actual.diff"
echo "golden test $dir/$name: same as $name.out"
