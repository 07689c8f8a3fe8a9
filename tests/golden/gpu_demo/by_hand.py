#!/usr/bin/env python3
"""The golden GPU demo trace's numbers worked out by hand from its events (README.md beside this file says
how), compared with `shardscope report --format json` and `shardscope inspect`.

usage: by_hand.py SHARDSCOPE
"""

import collections
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from by_hand_common import Checks, length, load, ns, read_text, shardscope_json  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TRACE = os.path.join(HERE, "gpu_demo.json.gz")
CLASS = {"kernel": "compute", "memcpy": "memory", "memset": "memory", "sync": "sync"}


def main():
    binary = os.path.abspath(sys.argv[1])
    ck = Checks("gpu_demo")
    d = load(TRACE)
    ev = d["traceEvents"]
    # Device events: the CUPTI activity the tracer wrote on a GPU stream's track (args.stream); "Context
    # Synchronize" on the synchronization track has no stream and is the host waiting, not the device.
    dev = []
    for e in ev:
        if e.get("ph") == "X" and e.get("cat") in CLASS and "stream" in e.get("args", {}):
            s = ns(e["ts"])
            dev.append({"name": e["name"], "cls": CLASS[e["cat"]], "start": s, "end": s + ns(e["dur"])})
    ck.eq("no NCCL kernel (no communication)", [x["name"] for x in dev if x["name"].startswith("nccl")], [])
    report, rc, _ = shardscope_json(binary, ["report", "--format", "json", "gpu_demo.json.gz"], HERE)
    ck.eq("report exit status", rc, 0)
    r = report["ranks"][0]
    ck.eq("events (complete X events)", r["events"], sum(1 for e in ev if e.get("ph") == "X"))
    # Device time by name: count and summed durations, exactly.
    by_name = collections.defaultdict(lambda: [0, 0, None])
    for x in dev:
        by_name[x["name"]][0] += 1
        by_name[x["name"]][1] += x["end"] - x["start"]
        by_name[x["name"]][2] = x["cls"]
    ck.eq("top device rows", sorted((t["name"], t["count"], t["time_ns"], t["class"]) for t in r["top_device"]),
          sorted((n, c, t, k) for n, (c, t, k) in by_name.items()))
    # The whole trace, as HTA's temporal breakdown (docs/report.md): whole µs, each event's start rounded up and
    # its end down, window [first device event, last device event end]; idle = window - |A|, compute = |C|,
    # non-compute = |A| - |C| (memory and sync), each over the window.
    us = [((x["start"] + 999) // 1000, x["end"] // 1000, x["cls"]) for x in dev]
    lo, hi = min(s for s, _, _ in us), max(e for _, e, _ in us)
    a = length([(s, e) for s, e, _ in us])
    c = length([(s, e) for s, e, k in us if k == "compute"])
    w = r["whole_trace"]
    ck.eq("whole trace window_ns", w["window_ns"], (hi - lo) * 1000)
    ck.pct("whole trace compute_pct", w["compute_pct"], 100.0 * c / (hi - lo))
    ck.pct("whole trace idle_pct", w["idle_pct"], 100.0 * ((hi - lo) - a) / (hi - lo))
    ck.pct("whole trace non_compute_pct", w["non_compute_pct"], 100.0 * (a - c) / (hi - lo))
    ck.eq("whole trace overlap (no communication)", w["overlap_pct"], None)
    # The same unrounded, in the trace's ns (beside HTA's line): window 4,467.060 µs, compute 2.83 %.
    x = w["exact"]
    lo_ns, hi_ns = min(d["start"] for d in dev), max(d["end"] for d in dev)
    a_ns = length([(d["start"], d["end"]) for d in dev])
    c_ns = length([(d["start"], d["end"]) for d in dev if d["cls"] == "compute"])
    ck.eq("exact window_ns, busy_ns, compute_ns", (x["window_ns"], x["busy_ns"], x["compute_ns"]), (hi_ns - lo_ns, a_ns, c_ns))
    ck.pct("exact compute_pct", x["compute_pct"], 100.0 * c_ns / (hi_ns - lo_ns))
    ck.pct("exact idle_pct", x["idle_pct"], 100.0 * ((hi_ns - lo_ns) - a_ns) / (hi_ns - lo_ns))
    ck.pct("exact non_compute_pct", x["non_compute_pct"], 100.0 * (a_ns - c_ns) / (hi_ns - lo_ns))
    # No steps (no "step" range, no ProfilerStep#N), no communication, no unit_backward: the per-step table,
    # the collectives and the prefetch row are n/a, and the report says so.
    ck.eq("step ranges in the trace", [e["name"] for e in ev if e.get("ph") == "X" and re.match(r"^(?:[Ss]tep|[Ii]teration|ProfilerStep)[ #_:]?(\d+)$", e["name"])], [])
    ck.eq("steps", (r["steps"], r["all_steps"]), ([], None))
    ck.eq("collectives", r["collectives"], [])
    ck.eq("prefetch verdict (no unit_backward)", (r["prefetch"]["verdict"], any(e.get("name") == "unit_backward" for e in ev)), ("n/a", False))
    # inspect: events by phase, the JSON's size, the events on each track.
    p = subprocess.run([binary, "inspect", "gpu_demo.json.gz"], cwd=HERE, capture_output=True, text=True, env=dict(os.environ, SHARDSCOPE_PLUGIN_PATH=""))
    phases = collections.Counter(e["ph"] for e in ev)
    want = f"events      {len(ev)} (" + ", ".join(f"{k} {phases[k]}" for k in sorted(phases)) + ")"
    ck.eq("inspect: events by phase", want in p.stdout, True)
    ck.eq("inspect: bytes of JSON", f"{len(read_text(TRACE).encode())} bytes of JSON" in p.stdout, True)
    per_tid = collections.Counter(e["tid"] for e in ev if e.get("ph") != "M")
    for tid, n in sorted(per_tid.items()):
        ck.eq(f"inspect: events on track tid {tid}", re.search(rf"^\s+0\s+{tid}\s+{n}\s", p.stdout, re.M) is not None, True)
    ck.done()


if __name__ == "__main__":
    main()
