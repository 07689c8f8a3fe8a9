#!/usr/bin/env python3
"""The graph-trace export's numbers worked out by hand from its rows (README.md beside this file says how),
compared with `shardscope report --format json`.

usage: by_hand.py SHARDSCOPE
"""

import collections
import os
import sqlite3
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from by_hand_common import Checks, intersect, length, shardscope_json  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    binary = os.path.abspath(sys.argv[1])
    ck = Checks("nsys_graph_trace")
    db = sqlite3.connect(f"file:{os.path.join(HERE, 'graphs.sqlite')}?mode=ro", uri=True)
    # Device work: kernels (NCCL's by name are communication), each graph launch one compute interval named
    # "CUDA graph <graphId>", copies memory.
    dev = []
    for s, e, name in db.execute("SELECT k.start, k.end, v.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds v ON v.id = k.demangledName"):
        dev.append((s, e, name, "communication" if name.startswith("nccl") else "compute"))
    for s, e, graph in db.execute("SELECT start, end, graphId FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE"):
        dev.append((s, e, f"CUDA graph {graph}", "compute"))
    for s, e in db.execute("SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY"):
        dev.append((s, e, "Memcpy HtoD", "memory"))
    report, rc, _ = shardscope_json(binary, ["report", "--format", "json", "graphs.sqlite"], HERE)
    ck.eq("report exit status", rc, 0)
    r = report["ranks"][0]
    by_name = collections.defaultdict(lambda: [0, 0, None])
    for s, e, name, cls in dev:
        by_name[name][0] += 1
        by_name[name][1] += e - s
        by_name[name][2] = cls
    ck.eq("top device rows (graph launches as compute)", sorted((t["name"], t["count"], t["time_ns"], t["class"]) for t in r["top_device"]),
          sorted((n, c, t, k) for n, (c, t, k) in by_name.items()))
    # The whole trace exactly, in ns: window [first start, last end], A, C and M the unions.
    lo, hi = min(d[0] for d in dev), max(d[1] for d in dev)
    a = length([(s, e) for s, e, _, _ in dev])
    c_iv = [(s, e) for s, e, _, k in dev if k == "compute"]
    m_iv = [(s, e) for s, e, _, k in dev if k == "communication"]
    c, m, o = length(c_iv), length(m_iv), length(intersect(m_iv, c_iv))
    x = r["whole_trace"]["exact"]
    ck.eq("exact window, busy, compute, comm, overlap ns", (x["window_ns"], x["busy_ns"], x["compute_ns"], x["comm_ns"], x["overlap_ns"]), (hi - lo, a, c, m, o))
    ck.pct("exact compute_pct", x["compute_pct"], 100.0 * c / (hi - lo))
    ck.pct("exact idle_pct", x["idle_pct"], 100.0 * (hi - lo - a) / (hi - lo))
    ck.pct("exact overlap_pct", x["overlap_pct"], 100.0 * o / m)
    ck.pct("exact non_compute_pct", x["non_compute_pct"], 100.0 * (a - c) / (hi - lo))
    # HTA's line: each event in whole µs, start up and end down, grouped as HTA's merge_kernel_intervals
    # (a new group when a start passes the running end; reversed ones count their negative length).
    us = sorted(((s + 999) // 1000, e // 1000, k) for s, e, _, k in dev)

    def hta_length(iv):
        groups, run = [], None
        for s, e in sorted(iv, key=lambda p: p[0]):
            if not groups or s > run:
                groups.append([s, e])
                run = e
            else:
                groups[-1][1] = max(groups[-1][1], e)
                run = max(run, e)
        return sum(e - s for s, e in groups)

    w_lo, w_hi = us[0][0], max(e for _, e, _ in us)
    w = r["whole_trace"]
    ck.eq("HTA window_ns (whole µs)", w["window_ns"], (w_hi - w_lo) * 1000)
    ck.pct("HTA compute_pct", w["compute_pct"], 100.0 * hta_length([(s, e) for s, e, k in us if k == "compute"]) / (w_hi - w_lo))
    ck.pct("HTA idle_pct", w["idle_pct"], 100.0 * (w_hi - w_lo - hta_length([(s, e) for s, e, _ in us])) / (w_hi - w_lo))
    ck.done()


if __name__ == "__main__":
    main()
