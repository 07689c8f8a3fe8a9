#!/usr/bin/env python3
"""The constructed Seq-pairing case's numbers worked out by hand from its events (README.md beside this file
says how), compared with `shardscope report --format json`.

usage: by_hand.py SHARDSCOPE
"""

import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from by_hand_common import Checks, bus_factor, intersect, kineto_rank, length, shardscope_json, union  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DTYPE_BYTES = {"Float": 4, "Half": 2, "BFloat16": 2, "Double": 8}
KIND = {"_allgather_base": "all_gather", "allgather": "all_gather", "_reduce_scatter_base": "reduce_scatter", "allreduce": "all_reduce"}


def collectives(r):
    """Each NCCL kernel joined to the record_param_comms of its External id: kind, bytes (all-gather: the
    gathered output, Out msg nelems x the dtype's size), group size, process group and sequence number."""
    ops = {e["args"]["External id"]: e["args"] for e in r["events"] if e.get("name") == "record_param_comms"}
    ops_ts = {e["args"]["External id"]: e["ts"] for e in r["events"] if e.get("name") == "record_param_comms"}
    out = []
    for x in r["device"]:
        if x["cls"] != "communication":
            continue
        a = ops[x["args"]["External id"]]
        kind = KIND[a["Collective name"]]
        nelems = a["Out msg nelems"] if kind == "all_gather" else a["In msg nelems"]
        out.append({"kind": kind, "bytes": nelems * DTYPE_BYTES[a["dtype"]], "group": a["Group size"], "pg": a["Process Group Name"],
                    "seq": a["Seq"], "start": x["start"], "dur": x["end"] - x["start"], "issued": ops_ts[x["args"]["External id"]]})
    return out


def main():
    binary = os.path.abspath(sys.argv[1])
    ck = Checks("kineto_seq_pairing")
    report, rc, _ = shardscope_json(binary, ["report", "--format", "json", "."], HERE)
    ck.eq("report exit status", rc, 0)
    by_rank = {r["rank"]: r for r in report["ranks"]}
    ranks = [kineto_rank(os.path.join(HERE, f)) for f in ("rank0.json", "rank1.json")]
    colls = {}
    for r in ranks:
        got = by_rank[r["rank"]]
        tag = f"rank {r['rank']}"
        # No ProfilerStep ranges and no Optimizer.step: steps from the collectives' repeating pattern
        # (docs/spec.md, Steps, rule 5). The smallest period p of the (kind, bytes) sequence in issue order
        # (record_param_comms' ts), held at least twice; each repetition starts a step; on the device a step
        # runs from its first kernel to the next step's first, the last to its last kernel's end.
        ck.eq(f"{tag} no ProfilerStep#N in the trace", r["steps"], [])
        cs = sorted(collectives(r), key=lambda c: c["issued"])
        seq = [(c["kind"], c["bytes"]) for c in cs]
        p = next(q for q in range(1, len(seq) + 1) if all(seq[i] == seq[i + q] for i in range(len(seq) - q)))
        reps = [cs[i:i + p] for i in range(0, len(cs) - p + 1, p)] if len(seq) >= 2 * p else []
        firsts = [min(c["start"] for c in rep) for rep in reps]
        windows = [(firsts[i + 1] if i + 1 < len(reps) else max(c["start"] + c["dur"] for c in rep)) - firsts[i]
                   for i, rep in enumerate(reps)]
        ck.eq(f"{tag} steps from the repeating collectives (rule)", got["steps_made_by"], "repeating_collectives")
        ck.eq(f"{tag} step windows (ns)", [s["step_ns"] for s in got["steps"]], windows)
        # The whole trace: [first device event, last device event end]; all device time is communication.
        compute = [(x["start"], x["end"]) for x in r["device"] if x["cls"] == "compute"]
        comm = [(x["start"], x["end"]) for x in r["device"] if x["cls"] == "communication"]
        lo, hi = min(x["start"] for x in r["device"]), max(x["end"] for x in r["device"])
        w = got["whole_trace"]
        ck.eq(f"{tag} whole trace window_ns", w["window_ns"], hi - lo)
        ck.pct(f"{tag} whole trace compute_pct", w["compute_pct"], 100.0 * length(compute) / (hi - lo))
        ck.pct(f"{tag} whole trace idle_pct", w["idle_pct"], 100.0 * ((hi - lo) - length(comm + compute)) / (hi - lo))
        ck.pct(f"{tag} whole trace non_compute_pct", w["non_compute_pct"], 100.0 * (length(comm + compute) - length(compute)) / (hi - lo))
        ck.pct(f"{tag} whole trace overlap_pct", w["overlap_pct"], 100.0 * length(intersect(union(comm), union(compute))) / length(comm))
        # One collective, the all-gather: count, bytes, summed time, algbw = bytes / time, busbw x (n-1)/n.
        cs = colls[r["rank"]] = collectives(r)
        b, t, n = sum(c["bytes"] for c in cs), sum(c["dur"] for c in cs), cs[0]["group"]
        got_c = {c["kind"]: c for c in got["collectives"]}["all_gather"]
        ck.eq(f"{tag} all_gather count", got_c["count"], len(cs))
        ck.eq(f"{tag} all_gather bytes", got_c["bytes"], b)
        ck.eq(f"{tag} all_gather time_ns", got_c["time_ns"], t)
        ck.eq(f"{tag} all_gather group_size", got_c["group_size"], n)
        ck.near(f"{tag} all_gather algbw_gbps", got_c["algbw_gbps"], b / t)
        ck.near(f"{tag} all_gather busbw_gbps", got_c["busbw_gbps"], b / t * bus_factor("all_gather", n))
    # Stragglers, by (process group, Seq): only the instances both ranks hold; the last to start and by how much.
    keyed = [{(c["pg"], c["seq"]): c for c in colls[r["rank"]]} for r in ranks]
    shared = sorted(set(keyed[0]) & set(keyed[1]), key=lambda k: k[1])
    ck.eq("straggler pairing", report["stragglers"]["pairing"], "sequence")
    inst = report["stragglers"]["instances"]
    ck.eq("straggler instances (Seq)", [i["ordinal"] for i in inst], [k[1] for k in shared])
    for i, k in zip(inst, shared):
        a0, a1 = keyed[0][k]["start"], keyed[1][k]["start"]
        ck.eq(f"Seq {k[1]} last rank", i["last_rank"], 1 if a1 > a0 else 0)
        ck.eq(f"Seq {k[1]} late_by_ns", i["late_by_ns"], abs(a1 - a0))
    # The link: each shared instance timed by its fastest rank, summed; link algbw and busbw over it.
    link = {l["kind"]: l for l in report["links"]}["all_gather"]
    fastest = sum(min(keyed[0][k]["dur"], keyed[1][k]["dur"]) for k in shared)
    lb = sum(keyed[0][k]["bytes"] for k in shared)
    ck.eq("link all_gather instances", link["instances"], len(shared))
    ck.eq("link all_gather fastest_ns", link["fastest_ns"], fastest)
    ck.eq("link all_gather bytes", link["bytes"], lb)
    ck.near("link all_gather busbw_gbps", link["busbw_gbps"], lb / fastest * bus_factor("all_gather", 2))
    ck.done()


if __name__ == "__main__":
    main()
