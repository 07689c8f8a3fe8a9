#!/usr/bin/env python3
"""`shardscope export RUN --perfetto`: the file is Chrome-trace JSON with one process per rank, the findings'
tracks named in each, and on a run with exposed communication, stragglers and prefetch units its findings
agree with `report --format json`: per rank the exposed intervals add up to all_steps.exposed_ns (to the
nanosecond), the steps are the report's steps, each flow runs from one rank to another and ends at the rank
the report says arrived last (times_last), and every unit pair the report judged has its verdict.

usage: export_perfetto_test.py SHARDSCOPE RUN_DIR WORK_DIR SMALL_RUN_DIR (summarised for the refusal of summaries:
any run will do, and a small one is read in a fraction of a second under ASan)"""
import collections
import json
import os
import shutil
import subprocess
import sys

bin, run, work, small_run = sys.argv[1:5]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
out = os.path.join(work, "run.json")
fails = []


def check(ok, what):
    if not ok:
        fails.append(what)


subprocess.run([bin, "export", run, "--perfetto", "-q", "-o", out], check=True)
report = json.loads(subprocess.run([bin, "report", run, "-q", "--format", "json"], check=True,
                                   capture_output=True, text=True).stdout)
with open(out) as f:
    trace = json.load(f)  # valid JSON, or the test fails here
events = trace["traceEvents"]
check(all("ph" in e and "pid" in e for e in events), "every event has ph and pid")

processes = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
ranks = {r["rank"]: r for r in report["ranks"]}
check(sorted(processes.values()) == sorted(f"rank {k}" for k in ranks), f"one process per rank: {processes}")
for pid in processes:
    for track in ("shardscope: steps", "shardscope: exposed communication", "shardscope: prefetch verdict"):
        check(list(threads.values()).count(track) == len(processes), f"each rank has the track '{track}'")
for e in events:
    if e["ph"] in "XisfB":
        check((e["pid"], e["tid"]) in threads, f"an event on an unnamed track: {e}")
        break

# Per rank, by track name: the slices' total in ns (durations are written to the nanosecond).
slices = collections.defaultdict(list)
for e in events:
    if e["ph"] == "X":
        slices[(processes[e["pid"]], threads[(e["pid"], e["tid"])])].append(e)
for k, r in ranks.items():
    exposed = sum(round(e["dur"] * 1000) for e in slices[(f"rank {k}", "shardscope: exposed communication")])
    check(exposed == r["all_steps"]["exposed_ns"],
          f"rank {k}: exposed {exposed} ns in the file, {r['all_steps']['exposed_ns']} in the report")
    steps = [e["name"] for e in slices[(f"rank {k}", "shardscope: steps")]]
    check(steps == [f"step {s['step']}" for s in r["steps"]], f"rank {k}: steps {steps} are not the report's")

# Flows: one start and one end per id, on two ranks, the end no earlier; ends per rank = times_last.
flows = collections.defaultdict(dict)
for e in events:
    if e["ph"] in "sf":
        check(e["ph"] not in flows[e["id"]], f"flow {e['id']} has two '{e['ph']}'")
        flows[e["id"]][e["ph"]] = e
ends = collections.Counter()
for i, f in flows.items():
    check(set(f) == {"s", "f"}, f"flow {i} is not a start and an end: {sorted(f)}")
    if set(f) == {"s", "f"}:
        check(f["s"]["pid"] != f["f"]["pid"] and f["s"]["ts"] <= f["f"]["ts"], f"flow {i} runs back or stays")
        ends[int(processes[f["f"]["pid"]].split()[1])] += 1
last = {s["rank"]: s["times_last"] for s in report["stragglers"]["ranks"] if s["times_last"]}
check(dict(ends) == last and len(flows) > 0, f"flows end at {dict(ends)}, the report's last arrivals {last}")

# Prefetch: as many verdicts per rank as unit pairs the report lists with an all-gather.
for k, r in ranks.items():
    pairs = sum(len(s.get("units", [])) for s in r.get("prefetch", {}).get("steps", []))
    got = len(slices[(f"rank {k}", "shardscope: prefetch verdict")])
    check(got == pairs and got > 0, f"rank {k}: {got} prefetch verdicts, the report has {pairs} unit pairs")
    # Each verdict the report's: hidden where it names no cause, else its cause.
    want = collections.Counter(u["cause"] or "hidden" for s in r["prefetch"]["steps"] for u in s["units"])
    seen = collections.Counter(e["args"]["verdict"] for e in slices[(f"rank {k}", "shardscope: prefetch verdict")])
    check(seen == want, f"rank {k}: verdicts {dict(seen)}, the report's {dict(want)}")

# A path that is not there: one error line naming it, exit 2, no file left behind.
bad = subprocess.run([bin, "export", os.path.join(work, "missing"), "--perfetto", "-o", os.path.join(work, "bad.json")],
                     capture_output=True, text=True)
check(bad.returncode == 2 and bad.stderr.startswith("shardscope: error:") and "missing" in bad.stderr
      and bad.stderr.count("\n") == 1 and not os.path.exists(os.path.join(work, "bad.json")),
      f"a missing input: exit {bad.returncode}, said {bad.stderr!r}")

# Rank summaries keep no events: refused in one line naming the file, before any output is made.
summaries = os.path.join(work, "summaries")
subprocess.run([bin, "summarize", "-q", small_run, "-o", summaries], check=True, capture_output=True)
bad = subprocess.run([bin, "export", summaries, "--perfetto", "-o", os.path.join(work, "bad.json")],
                     capture_output=True, text=True)
check(bad.returncode == 2 and "a rank summary holds no events" in bad.stderr and ".sqlite" in bad.stderr
      and not os.path.exists(os.path.join(work, "bad.json")), f"rank summaries: exit {bad.returncode}, {bad.stderr!r}")

for f in fails:
    print("FAIL:", f)
print(f"{len(events)} events, {len(flows)} flows, {len(processes)} ranks checked")
sys.exit(1 if fails else 0)
