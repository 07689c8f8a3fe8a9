#!/usr/bin/env python3
"""The golden Kineto case's numbers worked out by hand from its trace events (README.md beside this file says
how), compared with `shardscope report --format json` on the same two rank files.

usage: by_hand.py SHARDSCOPE
"""

import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from by_hand_common import Checks, breakdown, gpu_step_windows, intersect, kineto_rank, length, ns, shardscope_json, union  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
A2A_OPS = ("c10d::alltoall_base_", "c10d::alltoall_", "nccl:all_to_all")


def with_kinds(r):
    """Each communication kernel's collective: NCCL names these SendRecv, and NCCL runs an all-to-all as
    grouped sends and receives, so a kernel whose launch (the cuda_runtime event of its correlation id) lies
    inside a host op of the same thread that runs an all-to-all (c10d::alltoall_base_, nccl:all_to_all) is
    an all_to_all; the others send_recv."""
    calls = {e["args"]["correlation"]: e for e in r["events"]
             if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}
    ops = [e for e in r["events"] if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation") and e["name"] in A2A_OPS]
    for x in r["device"]:
        if x["cls"] != "communication":
            continue
        call = calls.get(x["args"].get("correlation"))
        inside = call is not None and any(o["pid"] == call["pid"] and o["tid"] == call["tid"] and ns(o["ts"]) <= ns(call["ts"]) <= ns(o["ts"]) + ns(o["dur"]) for o in ops)
        x["kind"] = "all_to_all" if inside else "send_recv"


def main():
    binary = os.path.abspath(sys.argv[1])
    ck = Checks("kineto_two_ranks")
    report, rc, _ = shardscope_json(binary, ["report", "--format", "json", "."], HERE)
    ck.eq("report exit status", rc, 0)
    by_rank = {r["rank"]: r for r in report["ranks"]}
    ranks = [kineto_rank(os.path.join(HERE, f)) for f in ("sampled_rank-0.json.gz", "sampled_rank-1.json.gz")]
    for r in ranks:
        with_kinds(r)
    totals = []
    for r in ranks:
        got = by_rank[r["rank"]]
        tag = f"rank {r['rank']}"
        compute = [(x["start"], x["end"]) for x in r["device"] if x["cls"] == "compute"]
        comm = [(x["start"], x["end"]) for x in r["device"] if x["cls"] == "communication"]
        activity = [(x["start"], x["end"]) for x in r["device"]]
        windows = gpu_step_windows(r)
        ck.eq(f"{tag}: steps", [s["step"] for s in got["steps"]], [n for n, _, _ in windows])
        total = {}
        for (n, lo, hi), s in zip(windows, got["steps"]):
            ck.eq(f"{tag} step {n} start_ns", s["start_ns"], lo)
            want = breakdown(compute, comm, activity, lo, hi)
            for k, v in want.items():
                ck.eq(f"{tag} step {n} {k}", s[k], v)
                total[k] = total.get(k, 0) + v
            ck.pct(f"{tag} step {n} overlap_pct", s["overlap_pct"], 100.0 * want["overlap_ns"] / want["comm_ns"])
            ck.pct(f"{tag} step {n} comm_fraction_pct", s["comm_fraction_pct"], 100.0 * want["comm_ns"] / want["step_ns"])
        # The windows follow one another without a gap: the all-steps row is their sum.
        for k, v in total.items():
            ck.eq(f"{tag} all steps {k}", got["all_steps"][k], v)
        totals.append((len(windows), total))
        # The whole trace over [first device event, last device event]: Kineto's times are whole µs already,
        # so SPEC's unions over that window are HTA's numbers (HTA itself: tests/plugins/hta_agreement_test.cc).
        lo, hi = min(a for a, _ in activity), max(b for _, b in activity)
        w = got["whole_trace"]
        c, m, a = union(compute), union(comm), union(activity)
        ck.eq(f"{tag} whole trace window_ns", w["window_ns"], hi - lo)
        ck.pct(f"{tag} whole trace compute_pct", w["compute_pct"], 100.0 * length(c) / (hi - lo))
        ck.pct(f"{tag} whole trace idle_pct", w["idle_pct"], 100.0 * ((hi - lo) - length(a)) / (hi - lo))
        ck.pct(f"{tag} whole trace non_compute_pct", w["non_compute_pct"], 100.0 * (length(a) - length(c)) / (hi - lo))
        ck.pct(f"{tag} whole trace overlap_pct", w["overlap_pct"], 100.0 * length(intersect(m, c)) / length(m))
        # The collectives: NCCL SendRecv kernels only, each a send_recv or an all_to_all (with_kinds); count and
        # summed kernel time exactly. Neither the kernels nor any record_param_comms say a message size or
        # group, so bytes, algbw, busbw and group are n/a: the check is that shardscope says so instead of
        # making one up.
        sr = [x for x in r["device"] if x["cls"] == "communication"]
        ck.eq(f"{tag} communication kernels are all SendRecv", all("SendRecv" in x["name"] for x in sr), True)
        sized = ("In msg nelems", "Out msg nelems", "Group size")
        ck.eq(f"{tag} record_param_comms saying a size or group", [e for e in r["events"] if e.get("name") == "record_param_comms" and any(k in e.get("args", {}) for k in sized)], [])
        colls = {c["kind"]: c for c in got["collectives"]}
        ck.eq(f"{tag} collective kinds", sorted(colls), sorted({x["kind"] for x in sr}))
        for kind in colls:
            of = [x for x in sr if x["kind"] == kind]
            ck.eq(f"{tag} {kind} count", colls[kind]["count"], len(of))
            ck.eq(f"{tag} {kind} time_ns", colls[kind]["time_ns"], sum(x["end"] - x["start"] for x in of))
            for k in ("bytes", "algbw_gbps", "busbw_gbps", "group_size"):
                ck.eq(f"{tag} {kind} {k} (not in the trace)", colls[kind][k], None)
    # Stragglers: no sequence numbers, so the n-th collective of a kind on each rank is one instance; the
    # arrival is the kernel's start (both ranks' Kineto clocks are the host's, as HTA reads them); the last
    # rank and by how much it trailed the other.
    inst = report["stragglers"]["instances"]
    ck.eq("straggler pairing", report["stragglers"]["pairing"], "position")
    kinds = sorted({x["kind"] for r in ranks for x in r["device"] if x["cls"] == "communication"})
    of_kind = {k: [[x for x in r["device"] if x["cls"] == "communication" and x["kind"] == k] for r in ranks] for k in kinds}
    ck.eq("straggler instances", len(inst), sum(min(len(a) for a in of_kind[k]) for k in kinds))
    got_inst = {(i["kind"], i["ordinal"]): i for i in inst}
    times_last, total_late, max_late = {}, {}, {}
    for kind in kinds:
        for k, (x0, x1) in enumerate(zip(*of_kind[kind])):
            a0, a1 = x0["start"], x1["start"]
            last = ranks[0]["rank"] if a0 > a1 else ranks[1]["rank"]
            got = got_inst.get((kind, k), {})
            ck.eq(f"{kind} instance {k} last rank", got.get("last_rank"), last)
            ck.eq(f"{kind} instance {k} late_by_ns", got.get("late_by_ns"), abs(a0 - a1))
            times_last[last] = times_last.get(last, 0) + 1
            total_late[last] = total_late.get(last, 0) + abs(a0 - a1)
            max_late[last] = max(max_late.get(last, 0), abs(a0 - a1))
        # Link time: each instance timed by its fastest rank (the shorter kernel), summed; a rank's wait share
        # is its summed kernel time of the kind beyond that, over its summed time (both ranks hold every one).
        durs = [[x["end"] - x["start"] for x in xs] for xs in of_kind[kind]]
        link = sum(min(a, b) for a, b in zip(*durs))
        for r, d in zip(ranks, durs):
            c = {c["kind"]: c for c in by_rank[r["rank"]]["collectives"]}[kind]
            ck.eq(f"rank {r['rank']} {kind} link_ns", c["link_ns"], link)
            ck.near(f"rank {r['rank']} {kind} wait_pct", c["wait_pct"], 100.0 * (sum(d) - link) / sum(d))
    for row in report["stragglers"]["ranks"]:
        rk = row["rank"]
        ck.eq(f"straggler rank {rk} times_last", row["times_last"], times_last.get(rk, 0))
        ck.eq(f"straggler rank {rk} total_late_by_ns", row["total_late_by_ns"], total_late.get(rk, 0))
        ck.eq(f"straggler rank {rk} max_late_by_ns", row["max_late_by_ns"], max_late.get(rk, 0))
    # diff rank 0 rank 1: the per-step means (ms) and the all-steps overlap of each side, from the sums above.
    diff, drc, _ = shardscope_json(binary, ["diff", "--format", "json", "--ranks", "sampled_rank-0.json.gz", "sampled_rank-1.json.gz"], HERE)
    ck.eq("diff exit status", drc, 0)
    rows = {x["metric"]: x for x in diff["ranks"][0]["diff"]}
    for metric, key in (("mean step time ms", "step_ns"), ("mean compute ms / step", "compute_ns"), ("mean communication ms / step", "comm_ns"),
                        ("mean exposed comm ms / step", "exposed_ns"), ("mean idle ms / step", "idle_ns")):
        for side, (n, t) in zip("ab", totals):
            ck.near(f"diff {side} {metric}", rows[metric][side], t[key] / n / 1e6, rel=1e-12)
    for side, (n, t) in zip("ab", totals):
        ck.near(f"diff {side} all-steps overlap %", rows["all-steps overlap %"][side], 100.0 * t["overlap_ns"] / t["comm_ns"], rel=1e-12)
        ck.eq(f"diff {side} steps", rows["steps"][side], n)
    # No prefetch row: neither rank has FSDP's labels (or the trainer's unit_backward), so check-prefetch has
    # nothing to check: n/a on each rank, exit 2.
    labels = [e["name"] for r in ranks for e in r["events"] if e.get("name", "").startswith(("FSDP::", "FullyShardedDataParallel", "unit_backward"))]
    ck.eq("FSDP labels in the traces", labels, [])
    prefetch, prc, _ = shardscope_json(binary, ["check-prefetch", "--format", "json", "."], HERE)
    ck.eq("check-prefetch exit status (nothing to check)", prc, 2)
    ck.eq("check-prefetch verdicts", [r["verdict"] for r in prefetch["ranks"]], ["n/a", "n/a"])
    ck.done()


if __name__ == "__main__":
    main()
