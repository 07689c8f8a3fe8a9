#!/usr/bin/env bash
# `report --mpi` under 1, 2 and 4 processes writes the one-process report byte for byte (JSON), on runs of
# 1, 2 and 5 rank files (more processes than files too), traces and summaries mixed; a bad file on any
# process makes every process exit non-zero with the file named once, by process 0, and no hang; with
# --files-per-process, each of 2 processes reads its own directory and the report is the one-process report
# of both.
# usage: same_as_one_process.sh SHARDSCOPE MPIEXEC SOURCE_DIR
set -uo pipefail
bin=$1
mpiexec=$2
src=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# OpenMPI refuses to run as root unless told both; CI containers often are root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# One machine: shared memory and self only, without UCX or verbs (which print warnings of their own on machines
# whose network hardware they half-see) and without CMA single copy (ptrace is often refused in containers).
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_osc=pt2pt
fail=0
# Under scripts/sanitize, OpenMPI's components (dlopened, unloaded at MPI_Finalize, so their frames have no
# module to suppress by) leave allocations LeakSanitizer reports; leak checking is off for the MPI processes
# alone. The one-process report here and every other test keep it, over the same analysis code.
run_mpi() { ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" timeout 300 "$mpiexec" --oversubscribe -n "$@"; }

# A 5-rank run: the trainer's two ranks of `pre`, with three more made by renumbering their summaries.
mkdir -p "$tmp/five"
(cd "$src/tests/golden/trainer_cpu_2ranks" && cp pre/*.json.gz "$tmp/five/" && "$bin" summarize pre -o "$tmp/s" >/dev/null)
for r in 2 3 4; do
  cp "$tmp/s/trace.rank$((r % 2)).sqlite" "$tmp/five/trace.rank$r.sqlite"
  echo "UPDATE meta SET value = $r WHERE key = 'rank'; UPDATE meta SET value = 5 WHERE key = 'world_size';" | sqlite3 "$tmp/five/trace.rank$r.sqlite"
done
# Its two traces say world_size 2: as summaries they say 5, so the run is one of 5 ranks.
for r in 0 1; do
  mv "$tmp/five/trace.rank$r.json.gz" "$tmp/trace.rank$r.json.gz"
  cp "$tmp/s/trace.rank$r.sqlite" "$tmp/five/trace.rank$r.sqlite"
  echo "UPDATE meta SET value = 5 WHERE key = 'world_size';" | sqlite3 "$tmp/five/trace.rank$r.sqlite"
done

check() {  # check NAME DIR PATH...
  local name=$1 dir=$2
  shift 2
  (cd "$dir" && "$bin" report "$@" --format json >"$tmp/one.json" 2>"$tmp/one.err") || { echo "FAIL: $name: one process: $(cat "$tmp/one.err")"; fail=1; return; }
  for n in 1 2 4; do
    if ! (cd "$dir" && run_mpi "$n" "$bin" report --mpi "$@" --format json >"$tmp/mpi.json" 2>"$tmp/mpi.err"); then
      echo "FAIL: $name: $n processes exited non-zero: $(head -3 "$tmp/mpi.err")"; fail=1; continue
    fi
    cmp -s "$tmp/one.json" "$tmp/mpi.json" || { echo "FAIL: $name: $n processes wrote another report:"; diff "$tmp/one.json" "$tmp/mpi.json" | head; fail=1; }
    # shardscope's own lines must match; the launcher's notices (if any) are shown, not compared.
    diff <(grep '^shardscope' "$tmp/one.err") <(grep '^shardscope' "$tmp/mpi.err") >/dev/null ||
      { echo "FAIL: $name: $n processes warned otherwise:"; diff "$tmp/one.err" "$tmp/mpi.err" | head -20; fail=1; }
    grep -v '^shardscope' "$tmp/mpi.err" | head -5 | sed "s/^/note: $name, $n process(es), launcher said: /"
    echo "ok: $name, $n process(es)"
  done
}
check "the trainer's 2 ranks" "$src/tests/golden/trainer_cpu_2ranks" pre
check "PyTorch FSDP2 on an H100, 2 ranks" "$src/tests/data/h100_nccl2" pytorch_fsdp2
check "one rank" "$src/tests/data" hta_nccl_parser_config
check "5 ranks from summaries" "$tmp" five

# One run's check holds under MPI as in one process: files of two jobs are refused (named once, by process 0),
# or with --allow-mixed warned of alike; ranks the world size promises and no file holds are named.
kineto() {  # kineto FILE RANK WORLD BACKEND
  echo '{"schemaVersion": 1, "baseTimeNanoseconds": 1700000000000000000, "traceEvents": [{"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 10, "dur": 20, "args": {"stream": 7}}], "distributedInfo": {"rank": '"$2"', "world_size": '"$3"', "backend": "'"$4"'"}}' >"$1"
}
mkdir -p "$tmp/jobs" "$tmp/partial"
kineto "$tmp/jobs/a.json" 0 2 nccl
kineto "$tmp/jobs/b.json" 1 2 gloo
for n in 1 2; do
  run_mpi "$n" "$bin" report --mpi "$tmp/jobs" >"$tmp/jobs.out" 2>"$tmp/jobs.err"
  rc=$?
  if [[ $rc == 0 ]]; then echo "FAIL: two jobs, $n process(es): the job exited 0"; fail=1; fi
  if [[ $(grep -c 'shardscope: error: these files are not one run: distributedInfo.backend is "nccl"' "$tmp/jobs.err") != 1 ]]; then
    echo "FAIL: two jobs, $n process(es): not named once:"; cat "$tmp/jobs.err"; fail=1
  fi
  echo "ok: two jobs refused, $n process(es) (job exit $rc)"
done
check "two jobs with --allow-mixed" "$tmp/jobs" . --allow-mixed
kineto "$tmp/partial/r0.json" 0 4 nccl
kineto "$tmp/partial/r3.json" 3 4 nccl
check "2 of 4 ranks" "$tmp/partial" .
grep -q "2 of the run's 4 ranks have no file here (ranks 1 and 2 missing" "$tmp/mpi.err" ||
  { echo "FAIL: 2 of 4 ranks: the missing ranks are not named: $(cat "$tmp/mpi.err")"; fail=1; }

# --files-per-process: each process reads the directory its pattern names ({rank}, {local_rank}: one node, so
# the same), and the report is the one-process report of those directories in process order.
check_own() {  # check_own NAME PATTERN DIR0 DIR1
  local name=$1 pattern=$2
  shift 2
  "$bin" report "$@" --format json >"$tmp/one.json" 2>"$tmp/one.err" || { echo "FAIL: $name: one process: $(cat "$tmp/one.err")"; fail=1; return; }
  if ! run_mpi 2 "$bin" report --mpi --files-per-process "$pattern" --format json >"$tmp/mpi.json" 2>"$tmp/mpi.err"; then
    echo "FAIL: $name: exited non-zero: $(head -3 "$tmp/mpi.err")"; fail=1; return
  fi
  cmp -s "$tmp/one.json" "$tmp/mpi.json" || { echo "FAIL: $name: another report:"; diff "$tmp/one.json" "$tmp/mpi.json" | head; fail=1; }
  diff <(grep '^shardscope' "$tmp/one.err") <(grep '^shardscope' "$tmp/mpi.err") >/dev/null ||
    { echo "FAIL: $name: warned otherwise:"; diff "$tmp/one.err" "$tmp/mpi.err" | head -20; fail=1; }
  echo "ok: $name, 2 processes"
}
mkdir -p "$tmp/own/node0" "$tmp/own/node1" "$tmp/mixed/node0" "$tmp/mixed/node1"
cp "$tmp"/five/trace.rank[01].sqlite "$tmp/own/node0/"
cp "$tmp"/five/trace.rank[234].sqlite "$tmp/own/node1/"
check_own "--files-per-process {rank}, 5 ranks as 2 + 3 summaries" "$tmp/own/node{rank}" "$tmp/own/node0" "$tmp/own/node1"
check_own "--files-per-process {local_rank}, 5 ranks as 2 + 3 summaries" "$tmp/own/node{local_rank}" "$tmp/own/node0" "$tmp/own/node1"
cp "$src"/tests/golden/trainer_cpu_2ranks/pre/trace.rank1.json.gz "$tmp/mixed/node0/"
cp "$src"/tests/golden/trainer_cpu_2ranks/pre/trace.rank0.json.gz "$tmp/mixed/node1/"
check_own "--files-per-process, the trainer's 2 traces, rank 1 first" "$tmp/mixed/node{rank}" "$tmp/mixed/node0" "$tmp/mixed/node1"
# A process whose pattern names nothing: every process exits non-zero, the path named once by process 0.
run_mpi 2 "$bin" report --mpi --files-per-process "$tmp/own/node{rank}x" >"$tmp/own.out" 2>"$tmp/own.err"
rc=$?
if [[ $rc == 0 ]]; then echo "FAIL: --files-per-process naming nothing: the job exited 0"; fail=1; fi
if [[ $(grep -c "shardscope: error: .*node0x.*(MPI process 0 of 2)" "$tmp/own.err") != 1 ]]; then
  echo "FAIL: --files-per-process naming nothing: not named once by process 0:"; cat "$tmp/own.err"; fail=1
fi
echo "ok: --files-per-process naming nothing (job exit $rc)"

# A damaged file: in the share of process 1 of 2 (its place among the files is 1).
mkdir -p "$tmp/bad"
cp "$src"/tests/golden/trainer_cpu_2ranks/pre/trace.rank0.json.gz "$tmp/bad/a.json.gz"
echo '{"traceEvents": [ {"ph": "X", "name": "a", "ts": 1, "dur": 2, "pid": 1, "tid": 1} ,, {"ph": "X"} ]}' >"$tmp/bad/b.json"
run_mpi 2 "$bin" report --mpi "$tmp/bad" >"$tmp/bad.out" 2>"$tmp/bad.err"
rc=$?
if [[ $rc == 0 ]]; then echo "FAIL: a damaged file: the job exited 0"; fail=1; fi
if [[ $(grep -c "shardscope: error: .*b.json.*(MPI process 1 of 2)" "$tmp/bad.err") != 1 ]]; then
  echo "FAIL: a damaged file: not named once by process 0:"; cat "$tmp/bad.err"; fail=1
fi
[[ -s $tmp/bad.out ]] && { echo "FAIL: a damaged file: a report was written"; fail=1; }
echo "ok: a damaged file on process 1 (job exit $rc)"
exit $fail
