#!/usr/bin/env bash
# `report --mpi` under a real Slurm: starts a one-node Slurm (munged, slurmctld, slurmd from Debian's packages)
# in a private folder, with its own config, key, socket and free ports, then runs `srun -n 4 shardscope report
# --mpi` on a tests/data run and on two 64-rank runs (generated traces; the trainer's summaries, renumbered),
# and docs/examples/report-mpi.sbatch through `sbatch`; each report must be the one-process report byte for byte. Skipped (exit 77, with the reason) only
# where Slurm cannot start: not root, or a package missing. Every daemon it started is stopped on exit.
# usage: one_node_slurm.sh SHARDSCOPE SOURCE_DIR
set -uo pipefail
bin=$1
src=$2
skip() {
  echo "SKIP: $*"
  exit 77
}
# slurmd starts each task as its job's user, so it must be root; munged and slurmctld could run as anyone.
[[ $(id -u) == 0 ]] || skip "not root: slurmd must be root to start tasks"
for tool in munged slurmctld slurmd srun sbatch sinfo python3; do
  command -v "$tool" >/dev/null || skip "$tool not found (Debian: munge slurmctld slurmd slurm-client, scripts/bootstrap)"
done
[[ -e $(dirname "$bin")/../lib/shardscope/libshardscope_mpi.so ]] || skip "shardscope was built without MPI"

# A short path: the munge socket's must fit a sockaddr_un (108 bytes).
tmp=$(mktemp -d /tmp/shardscope-slurm.XXXXXX)
chmod 755 "$tmp"
pids=()
names=()
# Every process this script's Slurm starts (slurmstepd too, which slurmd detaches) carries this mark in its
# environment, so the cleanup finds them by it and by nothing broader.
export SHARDSCOPE_SLURM_TEST=$tmp
cleanup() {
  if [[ -n ${ctld_up:-} ]]; then
    timeout 10 scancel --quiet --user="$(id -un)" 2>/dev/null
  fi
  local pid
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  for _ in $(seq 50); do
    local alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    ((alive)) || break
    sleep 0.1
  done
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null; done
  for proc in /proc/[0-9]*; do
    [[ ${proc#/proc/} == "$$" ]] && continue
    grep -qsFxz "SHARDSCOPE_SLURM_TEST=$tmp" "$proc/environ" && kill -KILL "${proc#/proc/}" 2>/dev/null
  done
  wait 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

mkdir -p "$tmp"/{munge,state,spool,log,tmp,work}
chmod 755 "$tmp/munge"  # munged wants its socket's folder open to all (the key itself is 400)
# munged refuses a key that others can read, and one shorter than 32 bytes.
head -c 1024 /dev/urandom >"$tmp/munge/munge.key"
chmod 400 "$tmp/munge/munge.key"
start() {  # start NAME COMMAND...: a daemon in the foreground, in the background here, its output in log/
  local name=$1
  shift
  "$@" >>"$tmp/log/$name.out" 2>&1 &
  pids+=($!)
  names+=("$name")
}
# --force: munged as root, in a folder it did not make (it would rather own /run/munge).
start munged munged --foreground --force --socket="$tmp/munge/munge.socket" --key-file="$tmp/munge/munge.key" \
  --pid-file="$tmp/munge/munged.pid" --log-file="$tmp/log/munged.log" --seed-file="$tmp/munge/munged.seed"

# Two ports free now (the kernel's choice); another program taking one before slurmctld binds it fails the start.
read -r ctld_port slurmd_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
cpus=$(nproc)
# FirstJobId: job ids name Open MPI's and PMIx's shared files (/dev/shm, session folders), and two copies of
# this test at once (each at its own port, so at ids 100 apart at least) must not meet there.
export SLURM_CONF=$tmp/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=shardscope-test
FirstJobId=$((ctld_port * 100))
SlurmctldHost=localhost
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$tmp/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
TmpFS=$tmp/tmp
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
PlugStackConfig=$tmp/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
MailProg=/bin/true
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
: >"$tmp/plugstack.conf"

die() {
  echo "FAIL: $*"
  for log in "$tmp"/log/*; do
    [[ -s $log ]] || continue
    echo "--- last lines of $(basename "$log"):"
    tail -15 "$log"
  done
  exit 1
}
start slurmctld slurmctld -D -i
start slurmd slurmd -D -N localhost
ctld_up=1

# The node answers within seconds; a minute without it idle is a start that failed (the logs say why).
state=
for _ in $(seq 600); do
  state=$(sinfo -h -n localhost -o %T 2>/dev/null)
  [[ $state == idle ]] && break
  for i in "${!pids[@]}"; do kill -0 "${pids[i]}" 2>/dev/null || die "${names[i]} exited while starting"; done
  sleep 0.1
done
[[ $state == idle ]] || die "the node is not idle after 60 s (state '${state}')"
echo "ok: one-node Slurm up ($(sinfo -V), $cpus CPUs, ports $ctld_port and $slurmd_port)"
# Debian's Open MPI 4.1 starts under srun through Slurm's PMIx plugin only (--mpi=pmi2 and none: "OMPI was not
# built with SLURM's PMI support"), so the test, as the docs, names it.
echo "note: srun --mpi=list: $(srun --mpi=list 2>&1 | tr -s '\n ' ' ')"

# The processes' transport on one machine, as tests/mpi: shared memory and self only.
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_osc=pt2pt
# Their session folders in this test's folder, removed with it.
export TMPDIR=$tmp/tmp
# 4 tasks on a node of fewer CPUs: Slurm's overcommit, given by environment so the job script stays the docs'.
export SLURM_OVERCOMMIT=1 SBATCH_OVERCOMMIT=1
# Under scripts/sanitize: leak checking off for the MPI processes, as tests/mpi (Open MPI's unloaded components).
asan_mpi="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
export PATH=$(cd "$(dirname "$bin")" && pwd):$PATH
fail=0

same() {  # same NAME ONE MPI ERR: the report under Slurm is the one-process one, byte for byte
  if ! cmp -s "$2" "$3"; then
    echo "FAIL: $1: the report under Slurm differs from the one-process report:"
    diff "$2" "$3" | head
    head -5 "$4"
    fail=1
  else
    echo "ok: $1 ($(wc -l <"$2") lines)"
  fi
}
with_srun() {  # with_srun NAME RUN FORMAT...: srun -n 4 ... report --mpi RUN, in each format
  local name=$1 run=$2 format
  shift 2
  for format in "$@"; do
    shardscope report "$run" --format "$format" -o "$tmp/one.$format" 2>"$tmp/one.err" ||
      { echo "FAIL: $name: one process: $(head -3 "$tmp/one.err")"; fail=1; continue; }
    if ! ASAN_OPTIONS=$asan_mpi timeout 120 srun --mpi=pmix -n 4 shardscope report --mpi "$run" --format "$format" -o "$tmp/srun.$format" \
      2>"$tmp/srun.err"; then
      echo "FAIL: $name: srun -n 4 exited non-zero:"
      head -5 "$tmp/srun.err"
      fail=1
      continue
    fi
    same "$name, srun -n 4, $format" "$tmp/one.$format" "$tmp/srun.$format" "$tmp/srun.err"
  done
}
# Text as the docs' lines write it; JSON, which holds every rank's report, for the 64-rank runs (the text of one
# is the sbatch job's).
with_srun "tests/data/h100_nccl2/pytorch_fsdp2 (2 ranks)" "$src/tests/data/h100_nccl2/pytorch_fsdp2" text json
python3 "$src/scripts/gen-kineto-traces" "$tmp/work/ranks64" --ranks 64 --mb-per-rank 0.02 >/dev/null
ls "$tmp"/work/ranks64/*.json | wc -l | grep -qx 64 || die "gen-kineto-traces did not write 64 ranks"
with_srun "a generated 64-rank run" "$tmp/work/ranks64" json
# 64 ranks with steps, units and memory: the trainer's two ranks' summaries, renumbered (as tests/mpi does).
(cd "$src/tests/golden/trainer_cpu_2ranks" && shardscope summarize pre -o "$tmp/work/pre" >/dev/null) ||
  die "summarize tests/golden/trainer_cpu_2ranks/pre failed"
# One process, no fsync: 64 sqlite3 runs, each syncing its commit, took seconds on a loaded machine.
python3 - "$tmp/work/pre" "$tmp/work/trainer64" <<'PY' || die "could not renumber the trainer's summaries"
import shutil, sqlite3, sys, os
pre, out = sys.argv[1:]
os.makedirs(out)
for r in range(64):
    path = os.path.join(out, "trace.rank%d.sqlite" % r)
    shutil.copy(os.path.join(pre, "trace.rank%d.sqlite" % (r % 2)), path)
    db = sqlite3.connect(path)
    db.execute("PRAGMA synchronous = OFF")
    db.execute("UPDATE meta SET value = ? WHERE key = 'rank'", (r,))
    db.execute("UPDATE meta SET value = 64 WHERE key = 'world_size'")
    db.commit()
    db.close()
PY
with_srun "64 ranks renumbered from the trainer's 2" "$tmp/work/trainer64" json

# The documented job script, as a user submits it (from the folder the report goes to).
shardscope report "$tmp/work/trainer64" -o "$tmp/one.batch" 2>"$tmp/one.err" || die "one process: $(cat "$tmp/one.err")"
# sbatch --wait polls every few seconds at best; squeue, every tenth of a second, for at most two minutes.
job=$(cd "$tmp/work" && ASAN_OPTIONS=$asan_mpi sbatch --parsable -o "$tmp/work/job.out" "$src/docs/examples/report-mpi.sbatch" \
  "$tmp/work/trainer64" report.txt) || die "sbatch refused docs/examples/report-mpi.sbatch"
for _ in $(seq 1200); do
  [[ -z $(squeue -h -j "$job" -o %i 2>/dev/null) ]] && break
  sleep 0.1
done
job_state=$(scontrol -o show job "$job" 2>/dev/null | grep -o "JobState=[A-Z]* .*ExitCode=[0-9:]*")
if [[ $job_state == "JobState=COMPLETED "* && $job_state == *" ExitCode=0:0" ]]; then
  same "docs/examples/report-mpi.sbatch, 64 ranks renumbered from the trainer's 2" "$tmp/one.batch" "$tmp/work/report.txt" "$tmp/work/job.out"
else
  echo "FAIL: sbatch docs/examples/report-mpi.sbatch: job $job: ${job_state:-not finished after 120 s}:"
  head -10 "$tmp/work/job.out"
  fail=1
fi
exit $fail
