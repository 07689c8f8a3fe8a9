"""Helpers for the golden cases' by-hand checks (tests/golden/CASE/by_hand.py).

Each case's script reads the trace events of its case directly, works out the numbers docs/spec.md defines
from them, runs `shardscope` on the same files and compares. Nothing here comes from shardscope: the trace is
read with Python's own json (numbers kept exact with Decimal), intervals are plain (start, end) pairs in
integer nanoseconds, and unions and intersections are computed below from their definitions. Standard
library only.
"""

import decimal
import gzip
import json
import os
import subprocess
import sys


def ns(us):
    """A trace time in microseconds (a Decimal, or an int) as integer nanoseconds, exactly."""
    v = decimal.Decimal(us) * 1000
    if v != v.to_integral_value():
        raise ValueError(f"{us} µs is not a whole number of nanoseconds")
    return int(v)


def read_text(path):
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return raw.decode("utf-8")


def load(path):
    """The whole trace file as JSON, numbers with a fraction as Decimal (no rounding through a double)."""
    return json.loads(read_text(path), parse_float=decimal.Decimal)


def union(intervals):
    """Merged, sorted, disjoint [start, end) intervals; empty ones dropped."""
    out = []
    for s, e in sorted(i for i in intervals if i[1] > i[0]):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [tuple(i) for i in out]


def length(intervals):
    return sum(e - s for s, e in union(intervals))


def clip(intervals, lo, hi):
    """The parts of the intervals inside [lo, hi)."""
    return [(max(s, lo), min(e, hi)) for s, e in intervals if min(e, hi) > max(s, lo)]


def intersect(a, b):
    """The intersection of two sets of intervals (each merged first)."""
    a, b = union(a), union(b)
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        s, e = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if e > s:
            out.append((s, e))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def breakdown(compute, comm, activity, lo, hi):
    """SPEC's per-step numbers for the window W = [lo, hi): C, M and A are the unions of the compute,
    communication and all device intervals inside W."""
    c, m, a = union(clip(compute, lo, hi)), union(clip(comm, lo, hi)), union(clip(activity, lo, hi))
    overlap = length(intersect(m, c))
    return {
        "step_ns": hi - lo,
        "compute_ns": length(c),
        "comm_ns": length(m),
        "overlap_ns": overlap,
        "exposed_ns": length(m) - overlap,
        "idle_ns": (hi - lo) - length(a),
    }


# nccl-tests' bus factors (doc/PERFORMANCE.md), n the ranks in the group.
def bus_factor(kind, n):
    if kind in ("all_gather", "reduce_scatter", "all_to_all"):
        return (n - 1) / n
    if kind == "all_reduce":
        return 2 * (n - 1) / n
    return 1.0


def shardscope_json(binary, args, cwd):
    """`shardscope ARGS` run in `cwd` (no plugins), its stdout parsed as JSON; and its exit status."""
    env = dict(os.environ, SHARDSCOPE_PLUGIN_PATH="")
    p = subprocess.run([binary] + list(args), cwd=cwd, env=env, capture_output=True, text=True)
    try:
        return json.loads(p.stdout), p.returncode, p.stderr
    except json.JSONDecodeError:
        sys.exit(f"shardscope {' '.join(args)} did not print JSON (exit {p.returncode}):\n{p.stdout[:2000]}\n{p.stderr[:2000]}")


class Checks:
    """Collects comparisons; `done()` prints each and exits 1 if any differed."""

    def __init__(self, case):
        self.case, self.failed, self.count = case, [], 0

    def eq(self, what, shardscope, by_hand):
        """Exact equality (integer nanoseconds, bytes, counts, names)."""
        self.count += 1
        ok = shardscope == by_hand
        print(f"{'ok  ' if ok else 'FAIL'} {what}: shardscope {shardscope!r}, by hand {by_hand!r}")
        if not ok:
            self.failed.append(what)

    def near(self, what, shardscope, by_hand, rel=1e-9, abs_=0.0):
        """Equality of a ratio computed in floating point, to `rel` relative (or `abs_` absolute) error, as
        both sides divide the same integers but may round differently."""
        self.count += 1
        ok = shardscope is not None and by_hand is not None and abs(shardscope - by_hand) <= max(abs_, rel * abs(by_hand))
        print(f"{'ok  ' if ok else 'FAIL'} {what}: shardscope {shardscope!r}, by hand {by_hand!r}")
        if not ok:
            self.failed.append(what)

    def pct(self, what, shardscope, by_hand):
        """A percentage, which shardscope's JSON gives to 4 decimals: equal to the by-hand value rounded so."""
        self.near(what, shardscope, by_hand, rel=0.0, abs_=0.5e-4 + 1e-9)

    def done(self):
        if self.failed:
            print(f"{self.case}: {len(self.failed)} of {self.count} numbers differ from the ones worked out by hand: {', '.join(self.failed)}")
            sys.exit(1)
        print(f"{self.case}: all {self.count} numbers agree with the ones worked out by hand")


# PyTorch profiler (Kineto) traces.
KINETO_DEVICE_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
NCCL_PREFIXES = ("ncclKernel_", "ncclDevKernel_", "nccl")


def kineto_class(e):
    """SPEC's event classes for a Kineto device event: NCCL kernels (by name) are communication, copies and
    sets memory, every other kernel compute."""
    if e["cat"] == "kernel":
        return "communication" if e["name"].startswith(NCCL_PREFIXES) else "compute"
    return "memory"


def kineto_rank(path, step_pattern=r"^ProfilerStep#(\d+)$"):
    """A Kineto trace's device events (with class and exact ns times), the host launch time of each (the
    cuda_runtime/cuda_driver event of the same correlation id) and the ProfilerStep host ranges."""
    import re
    d = load(path)
    ev = d["traceEvents"]
    launches = {}
    for e in ev:
        if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {}):
            launches[e["args"]["correlation"]] = ns(e["ts"])
    device, steps = [], []
    for e in ev:
        if e.get("ph") != "X":
            continue
        if e.get("cat") in KINETO_DEVICE_CATS:
            s = ns(e["ts"])
            device.append({"name": e["name"], "cls": kineto_class(e), "start": s, "end": s + ns(e["dur"]), "args": e.get("args", {}),
                           "launch": launches.get(e.get("args", {}).get("correlation"))})
        elif e.get("cat") == "user_annotation" and re.match(step_pattern, e["name"]):
            s = ns(e["ts"])
            steps.append((int(re.match(step_pattern, e["name"]).group(1)), s, s + ns(e["dur"])))
    steps.sort(key=lambda x: x[1])
    device.sort(key=lambda x: x["start"])
    return {"rank": d.get("distributedInfo", {}).get("rank"), "device": device, "steps": steps, "events": ev}


def gpu_step_windows(r):
    """Each step's window on the device: a device event belongs to the step whose host ProfilerStep range
    holds its launch; the window runs from the step's first device event to the next step's first (the last
    step: to its last device event's end), so the idle time between steps is the earlier step's."""
    first, last = {}, {}
    for x in r["device"]:
        for n, lo, hi in r["steps"]:
            if x["launch"] is not None and lo <= x["launch"] < hi:
                first[n] = min(first.get(n, x["start"]), x["start"])
                last[n] = max(last.get(n, x["end"]), x["end"])
    out = []
    for i, (n, lo, hi) in enumerate(r["steps"]):
        start = first[n]
        end = first[r["steps"][i + 1][0]] if i + 1 < len(r["steps"]) else last[n]
        out.append((n, start, end))
    return out
