#!/usr/bin/env python3
"""`shardscope-viewer --screenshot ... --area START:END` on the golden Kineto pair (tests/golden/kineto_two_ranks):
the Area dock's rows, which the viewer prints as Ctrl+C copies them, against the same table worked out here
from the trace events alone (Python's standard library, no shardscope code); and bad --area values refused
with one line on stderr and exit 2.

By hand: a slice is a complete event ('X') with an integer pid and tid (PyTorch's "Spans"/"Traces" rows carry
string ones and are no rank's track) and a duration >= 0; times are whole us, so exact in ns. The run starts
at the earliest slice of either rank. A slice is in the area [start + START, start + END) when it overlaps it
(an instant: starts in it), over every row, i.e. every track of both ranks; it counts with its whole duration,
grouped by name across ranks: count, total, max, and the mean rounded to the ns, heaviest total first.
`--area step:551`: the area from the earliest to the latest end of the ranks' step 551 windows on the device
(tests/golden/by_hand_common.py's gpu_step_windows, as the golden case's by_hand.py works them out).

usage: area_by_hand.py SHARDSCOPE_VIEWER
"""

import decimal
import gzip
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(ROOT, "tests", "golden"))
from by_hand_common import gpu_step_windows, kineto_rank  # noqa: E402
CASE = os.path.join("tests", "golden", "kineto_two_ranks")
FILES = ("sampled_rank-0.json.gz", "sampled_rank-1.json.gz")
LO_MS, HI_MS = 300, 302  # a 2 ms area inside ProfilerStep#551 on both ranks


def ns(us):
    v = decimal.Decimal(us) * 1000
    assert v == v.to_integral_value(), us
    return int(v)


def slices():
    out = []
    for f in FILES:
        with gzip.open(os.path.join(ROOT, CASE, f), "rt") as fh:
            for e in json.load(fh)["traceEvents"]:
                if e.get("ph") != "X" or not isinstance(e.get("pid"), int) or not isinstance(e.get("tid"), int):
                    continue
                if "ts" not in e or "dur" not in e or decimal.Decimal(e["dur"]) < 0:
                    continue
                out.append((e["name"], ns(e["ts"]), ns(e["dur"])))
    return out


def step_area(number):
    windows = [w for f in FILES for w in gpu_step_windows(kineto_rank(os.path.join(ROOT, CASE, f))) if w[0] == number]
    return min(w[1] for w in windows), max(w[2] for w in windows)


def by_hand(step=None):
    events = slices()
    start = min(ts for _, ts, _ in events)
    lo, hi = step_area(step) if step is not None else (start + LO_MS * 1_000_000, start + HI_MS * 1_000_000)
    groups = {}
    for name, ts, dur in events:
        inside = (lo <= ts < hi) if dur == 0 else (ts < hi and ts + dur > lo)
        if inside:
            g = groups.setdefault(name, [0, 0, 0])
            g[0] += 1
            g[1] += dur
            g[2] = max(g[2], dur)
    rows = [(name, c, t, (2 * t + c) // (2 * c), m) for name, (c, t, m) in groups.items()]  # mean: half up
    rows.sort(key=lambda r: (-r[2], r[0]))
    return rows


def viewer(binary, area, tmp, run=CASE):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=os.path.join(tmp, "config"))
    png = os.path.join(tmp, "area.png")
    return subprocess.run([binary, "--screenshot", png, "--size", "1200x800", "--area", area, run], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120)


def main():
    binary = os.path.abspath(sys.argv[1])
    failed = []

    def check(what, ok, detail=""):
        print(f"{'ok  ' if ok else 'FAIL'} {what}{': ' + detail if detail else ''}")
        if not ok:
            failed.append(what)

    with tempfile.TemporaryDirectory() as tmp:
        p = viewer(binary, f"{LO_MS}ms:{HI_MS}ms", tmp)
        check("exit 0", p.returncode == 0, f"exit {p.returncode}" if p.returncode else "")
        lines = p.stdout.splitlines()
        check("header", lines[:1] == ["name\tcount\ttotal_ns\tmean_ns\tmax_ns"], repr(lines[:1]))
        got = [tuple([c[0]] + [int(x) for x in c[1:]]) for c in (ln.split("\t") for ln in lines[1:])]
        want = by_hand()
        check("some slices in the area", len(want) >= 3, f"{len(want)} names")
        check("rows", len(got) == len(want), f"viewer {len(got)}, by hand {len(want)}")
        for g, w in zip(got, want):
            check(f"row {w[0][:60]}", g == w, f"viewer {g[1:]}, by hand {w[1:]}" if g[0] == w[0] else f"{g[0]!r}")
        check("picture written", os.path.getsize(os.path.join(tmp, "area.png")) > 0)

        p = viewer(binary, "step:551", tmp)
        got = [tuple([c[0]] + [int(x) for x in c[1:]]) for c in (ln.split("\t") for ln in p.stdout.splitlines()[1:])]
        want = by_hand(551)
        check("step:551: exit 0", p.returncode == 0, f"exit {p.returncode}" if p.returncode else "")
        check("step:551: the same rows", got == want,
              f"{len(got)} rows, by hand {len(want)}; first difference "
              f"{next(((g, w) for g, w in zip(got, want) if g != w), None)}")
        check("step:551: more slices than the 2 ms area", sum(w[1] for w in want) > 1000, f"{sum(w[1] for w in want)}")

        for bad, why in (("300:302ms", "needs a unit"), ("302ms:300ms", "after the start"), ("1ms", "START:END"),
                         ("10s:11s", "after the run's end"), ("step:9999", "no rank has step 9999"),
                         ("step:x", "step:N")):
            p = viewer(binary, bad, tmp)
            err = [ln for ln in p.stderr.splitlines() if ln.startswith("shardscope-viewer:")]  # not Qt's notes
            check(f"--area {bad} refused", p.returncode == 2 and len(err) == 1 and why in err[0] and "--area" in err[0],
                  f"exit {p.returncode}, {err!r}")
        # A run opened from rank summaries has no slices: refused, not a crash.
        summary = os.path.join("tests", "fuzz", "corpus", "fuzz_summary_reader", "summary_rank0.sqlite")
        p = viewer(binary, "1ms:2ms", tmp, summary)
        check("--area on rank summaries refused", p.returncode == 2 and "rank summaries hold no slices" in p.stderr,
              f"exit {p.returncode}")

        # In the window the area is the hand's: without --screenshot --area is refused, not ignored.
        p = subprocess.run([binary, "--area", "1ms:2ms", CASE], cwd=ROOT, capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=os.path.join(tmp, "config")))
        check("--area without --screenshot refused", p.returncode == 2 and "--area needs --screenshot" in p.stderr,
              f"exit {p.returncode}")
    if failed:
        print(f"area_by_hand: {len(failed)} checks failed: {', '.join(failed)}")
        sys.exit(1)
    print("area_by_hand: the Area dock agrees with the slices counted by hand")


if __name__ == "__main__":
    main()
