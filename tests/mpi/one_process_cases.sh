#!/usr/bin/env bash
# `report --mpi` gives the one-process answer for each case the one-process path handles, a bad file beside
# two good traces in one folder: the same exit status, the same report on stdout and the same lines of ours
# on stderr (warnings and errors; an error under MPI adds which process met it, " (MPI process P of N)",
# dropped before comparing). Under 1, 2 and 4 processes, so the bad file falls to process 0 and to another.
# Summaries as well as traces: a summary holding meta.rank -1 or run_config nested 100,000 deep.
# usage: one_process_cases.sh SHARDSCOPE MPIEXEC SOURCE_DIR
set -uo pipefail
bin=$(realpath "$1")
mpiexec=$2
src=$3
tmp=$(mktemp -d)
trap 'chmod -R u+rw "$tmp"; rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_osc=pt2pt
# As nobody (the unreadable case, as root), mpiexec too: its processes then share its session directory.
run_mpi() { ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" timeout 300 "${as[@]}" "$mpiexec" --oversubscribe -n "$@"; }
fail=0
as=()  # what runs shardscope: itself, or (the unreadable case, as root) as nobody
good=$src/tests/golden/trainer_cpu_2ranks/pre

case_dir() {  # case_dir NAME: a folder with the trainer's two good traces
  mkdir -p "$tmp/$1"
  cp "$good"/trace.rank[01].json.gz "$tmp/$1/"
}
ours() { grep '^shardscope' "$1" | sed -E 's/ \(MPI process [0-9]+ of [0-9]+\)$//'; }

check() {  # check NAME EXPECTED_STATUS [what stderr must hold]
  local name=$1 want=$2 says=${3:-}
  (cd "$tmp" && "${as[@]}" "$bin" report "$name" --format json >"$tmp/one.out" 2>"$tmp/one.err")
  local rc=$?
  if [[ $rc != "$want" ]]; then echo "FAIL: $name: one process exited $rc, not $want: $(cat "$tmp/one.err")"; fail=1; fi
  if [[ -n $says ]] && ! grep -q -- "$says" "$tmp/one.err"; then
    echo "FAIL: $name: one process does not say \"$says\": $(cat "$tmp/one.err")"; fail=1
  fi
  for n in 1 2 4; do
    local before=$fail
    (cd "$tmp" && run_mpi "$n" "$bin" report --mpi "$name" --format json >"$tmp/mpi.out" 2>"$tmp/mpi.err")
    local mrc=$?
    [[ $mrc == "$rc" ]] || { echo "FAIL: $name: $n processes exited $mrc, one process $rc: $(ours "$tmp/mpi.err")"; fail=1; }
    cmp -s "$tmp/one.out" "$tmp/mpi.out" || { echo "FAIL: $name: $n processes wrote another report"; fail=1; }
    diff <(ours "$tmp/one.err" | sort) <(ours "$tmp/mpi.err" | sort) >"$tmp/diff" ||
      { echo "FAIL: $name: $n processes said otherwise:"; cat "$tmp/diff"; fail=1; }
    [[ $fail == "$before" ]] && echo "ok: $name, $n process(es) (exit $mrc)"
  done
}

# Garbage named as a trace: passed over with a warning, exit 0; first among the files (process 0's) and last.
case_dir garbage_first
head -c 4000 /dev/urandom | base64 >"$tmp/garbage_first/a_garbage.json"
check garbage_first 0 "a_garbage.json: passed over"
case_dir garbage_last
head -c 4000 /dev/urandom | base64 >"$tmp/garbage_last/z_garbage.json"
check garbage_last 0 "z_garbage.json: passed over"
# The issue's case: garbage beside one good trace (under 2 processes, process 0's share is the garbage alone).
mkdir -p "$tmp/garbage_beside_one"
cp "$good/trace.rank0.json.gz" "$tmp/garbage_beside_one/"
head -c 4000 /dev/urandom | base64 >"$tmp/garbage_beside_one/a_garbage.json"
check garbage_beside_one 0 "a_garbage.json: passed over"
# Garbage alone: no trace in the folder is an error, under MPI too (each process's share holds none).
mkdir -p "$tmp/garbage_only"
head -c 4000 /dev/urandom | base64 >"$tmp/garbage_only/a.json"
head -c 4000 /dev/urandom | base64 >"$tmp/garbage_only/b.json"
check garbage_only 2 "no file here is a trace any importer reads"
# A damaged Nsight database (SQLite's header, then noise): refused, exit 2.
case_dir damaged_sqlite
{ printf 'SQLite format 3\0'; head -c 8000 /dev/urandom; } >"$tmp/damaged_sqlite/b.sqlite"
check damaged_sqlite 2 "b.sqlite: at byte 0"
# Summaries from strangers: meta.rank -1, and run_config nested 100,000 deep (which crashed --mpi).
(cd "$good/.." && "$bin" summarize pre -o "$tmp/summaries" >/dev/null)
case_dir summary_rank_minus_1
cp "$tmp/summaries/trace.rank1.sqlite" "$tmp/summary_rank_minus_1/b.sqlite"
echo "UPDATE meta SET value = -1 WHERE key = 'rank';" | sqlite3 "$tmp/summary_rank_minus_1/b.sqlite"
check summary_rank_minus_1 2 "b.sqlite: at byte 0: summary: meta.rank is -1"
case_dir summary_deep
cp "$tmp/summaries/trace.rank1.sqlite" "$tmp/summary_deep/b.sqlite"
echo "UPDATE meta SET value = '$(printf '[%.0s' $(seq 100000))' WHERE key = 'run_config';" | sqlite3 "$tmp/summary_deep/b.sqlite"
check summary_deep 2 "b.sqlite: at byte 0: summary: meta.run_config is not JSON a trace may hold: nests"
# An empty file: refused, exit 2.
case_dir empty
: >"$tmp/empty/a_empty.json"
check empty 2 "a_empty.json: at byte 0: empty file"
# Two files claiming one rank: refused by the one-run check, exit 2.
case_dir duplicate_rank
cp "$good/trace.rank1.json.gz" "$tmp/duplicate_rank/trace.rank1.copy.json.gz"
check duplicate_rank 2 "both say they are rank 1"
# An unreadable file: refused, exit 2. Root reads a mode-000 file, so as root the case runs as nobody where
# nobody can run shardscope here, and is skipped (and said so) where it cannot.
as=()
if [[ $(id -u) == 0 ]]; then
  as=(setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$tmp")
  chmod 755 "$tmp"
  "${as[@]}" "$bin" --help >/dev/null 2>&1 || as=(skip)
fi
if [[ ${as[0]:-} == skip ]]; then
  echo "skipped: an unreadable file (running as root, and nobody cannot run $bin to stand in)"
else
  case_dir unreadable
  cp "$good/trace.rank1.json.gz" "$tmp/unreadable/trace.rank2.json.gz"
  chmod 000 "$tmp/unreadable/trace.rank2.json.gz"
  check unreadable 2 "trace.rank2.json.gz: at byte 0: cannot open: Permission denied"
fi
exit $fail
