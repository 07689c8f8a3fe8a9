#!/usr/bin/env python3
"""The golden trainer run's numbers worked out by hand from its trace events (README.md beside this file says
how), compared with `shardscope report --format json` and `check-prefetch --format json` on the same traces.

usage: by_hand.py SHARDSCOPE
"""

import os
import sys
from fractions import Fraction

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from by_hand_common import Checks, breakdown, bus_factor, intersect, length, load, ns, shardscope_json, union  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def read_rank(path):
    """The CPU trainer's trace: the compute thread's compute ranges (and optimizer phase) are compute, the
    communication threads' ranges (cat "comm") are communication; the "step" ranges are the steps."""
    d = load(path)
    out = {"compute": [], "comm": [], "steps": [], "bc": [], "ag": [], "rs": [], "backward_phase": [], "rank": d["shardscope"]["rank"]}
    for e in d["traceEvents"]:
        if e.get("ph") != "X":
            continue
        s = ns(e["ts"])
        iv = (s, s + ns(e["dur"]))
        cat, name, args = e.get("cat"), e.get("name"), e.get("args", {})
        if cat == "compute" or (cat == "phase" and name == "optimizer"):
            out["compute"].append(iv)
        if cat == "comm":
            out["comm"].append(iv)
        if cat == "step" and name == "step":
            out["steps"].append((args["step"], iv))
        if cat == "compute" and name == "unit_backward":
            out["bc"].append({"unit": args["unit"], "start": iv[0], "end": iv[1]})
        if cat == "comm" and name in ("all_gather", "reduce_scatter"):
            c = {"unit": args.get("unit", -1), "start": iv[0], "end": iv[1], "issued": int(args["issued_ns"]), "bytes": int(args["bytes"]), "group": int(args["group_size"])}
            out["ag" if name == "all_gather" else "rs"].append(c)
        if cat == "phase" and name == "backward":
            out["backward_phase"].append(iv)
    out["steps"].sort(key=lambda x: x[1][0])
    out["ag"].sort(key=lambda a: a["start"])
    out["rs"].sort(key=lambda a: a["start"])
    # The clock pairs (monotonic, realtime): the header's and the shardscope_clock_sync events.
    sync = d["shardscope"]["clock"]["sync"]
    pairs = [(int(sync["monotonic_ns"]), int(sync["realtime_ns"]))]
    pairs += [(int(e["args"]["monotonic_ns"]), int(e["args"]["realtime_ns"])) for e in d["traceEvents"] if e.get("name") == "shardscope_clock_sync"]
    out["clock"] = sorted(pairs)
    out["run_config"] = d["shardscope"]["run_config"]
    return out


def wall(r, t):
    """A trace time on the wall clock, exactly (a Fraction): t plus realtime - monotonic interpolated linearly
    between the clock pairs around t (held at the first or last pair outside them)."""
    c = r["clock"]
    if t <= c[0][0]:
        return Fraction(t + c[0][1] - c[0][0])
    for (m0, r0), (m1, r1) in zip(c, c[1:]):
        if t <= m1:
            return t + (r0 - m0) + Fraction((r1 - m1) - (r0 - m0)) * (t - m0) / (m1 - m0)
    return Fraction(t + c[-1][1] - c[-1][0])


def prefetch_rows(r):
    """SPEC's BACKWARD_PRE pairs per step: units' backward computes BC_i in the order they ran, each paired
    with the next re-gathered unit's backward all-gather AG_{i-1}."""
    compute = union(r["compute"])
    steps = []
    for n, (lo, hi) in r["steps"]:
        bwd = [b for b in r["backward_phase"] if lo <= b[0] < hi][0][0]
        # The all-gathers issued in this step's backward re-gather their unit for backward.
        bags = [a for a in r["ag"] if bwd <= a["issued"] < hi]
        units = {a["unit"] for a in bags}
        bcs = sorted((b for b in r["bc"] if lo <= b["start"] < hi and b["unit"] in units), key=lambda b: b["start"])
        rows = []
        for cur, nxt in zip(bcs, bcs[1:]):
            # AG_{i-1}: the next unit's backward all-gather, the latest that started by BC_{i-1}'s start.
            ag = max((a for a in bags if a["unit"] == nxt["unit"] and a["start"] <= nxt["start"]), key=lambda a: a["start"])
            hidden = length(intersect([(ag["start"], ag["end"])], compute))
            wait_end = min(ag["end"], nxt["start"])
            exposed = max(0, (wait_end - ag["start"]) - length(intersect([(ag["start"], wait_end)], compute)))
            rows.append({"unit": cur["unit"], "next_unit": nxt["unit"], "issue_lead_ns": cur["start"] - ag["issued"],
                         "all_gather_ns": ag["end"] - ag["start"], "hidden_ns": hidden, "exposed_wait_ns": exposed,
                         "queued_ns": ag["start"] - ag["issued"], "ag": ag, "bc": cur})
        ag_ns = sum(x["all_gather_ns"] for x in rows)
        hid = sum(x["hidden_ns"] for x in rows)
        effective = all(x["issue_lead_ns"] > 0 for x in rows) and hid / ag_ns >= 0.5
        steps.append({"step": n, "rows": rows, "ag_ns": ag_ns, "hidden_ns": hid, "effective": effective})
    return steps


def pair_cause(x, peer):
    """docs/check-prefetch.md's causes, in its order, for a pair issued late or under 50 % hidden. The trainer
    run has no rate_limited instants and runs all-gathers and reduce-scatters on threads of their own, so
    neither the rate limiter nor a reduce-scatter on the all-gather's own stream can be the cause here."""
    if x["issue_lead_ns"] > 0 and x["hidden_ns"] / x["all_gather_ns"] >= 0.5:
        return None
    if x["issue_lead_ns"] <= 0:
        return "issued late"
    if peer is not None and x["exposed_wait_ns"] > 0 and peer[1] >= 0.5 * x["exposed_wait_ns"]:
        return "late peer"
    if x["ag"]["start"] >= x["bc"]["end"]:
        return "started late"
    if x["all_gather_ns"] > x["bc"]["end"] - x["bc"]["start"]:
        return "longer than compute"
    return "no compute under it"


def late_peer(r, other, ag):
    """The same all-gather on the other rank (the n-th on each, the run has one process group), compared on
    the wall clock: (the other rank, by how much it started after this one) when it started later."""
    k = r["ag"].index(ag)
    late = wall(other, other["ag"][k]["start"]) - wall(r, ag["start"])
    return (other["rank"], late) if late > 0 else None


def step_cause(m):
    """A step not effective is named by a late issue first (no limiter in this run), else by the cause that
    left the most exposed wait; an effective step has none."""
    if m["effective"]:
        return None
    causes = [x["cause"] for x in m["rows"] if x["cause"]]
    if "issued late" in causes:
        return "issued late"
    exposed = {}
    for x in m["rows"]:
        if x["cause"]:
            exposed[x["cause"]] = exposed.get(x["cause"], 0) + x["exposed_wait_ns"]
    return max(exposed, key=exposed.get)


def run_verdict(steps):
    """docs/check-prefetch.md's run rule: step 0 left out; a strict majority decides; on a tie, at least half
    of the steady steps' backward all-gather time hidden."""
    steady = [s for s in steps if s["step"] != 0]
    eff = sum(s["effective"] for s in steady)
    if eff * 2 != len(steady):
        return eff * 2 > len(steady)
    return sum(s["hidden_ns"] for s in steady) / sum(s["ag_ns"] for s in steady) >= 0.5


def main():
    binary = os.path.abspath(sys.argv[1])
    ck = Checks("trainer_cpu_2ranks")
    for run in ("pre", "none"):
        report, rc, _ = shardscope_json(binary, ["report", "--format", "json", run], HERE)
        ck.eq(f"{run}: report exit status", rc, 0)
        by_rank = {r["rank"]: r for r in report["ranks"]}
        prefetch, prc, _ = shardscope_json(binary, ["check-prefetch", "--format", "json", run], HERE)
        pre_by_rank = {r["rank"]: r for r in prefetch["ranks"]}
        verdicts = []
        ranks = [read_rank(os.path.join(HERE, run, f)) for f in ("trace.rank0.json.gz", "trace.rank1.json.gz")]
        for r, other in zip(ranks, reversed(ranks)):
            got = by_rank[r["rank"]]
            tag = f"{run} rank {r['rank']}"
            activity = r["compute"] + r["comm"]
            # Per step: the window is the trainer's step range.
            ck.eq(f"{tag}: steps", [s["step"] for s in got["steps"]], [n for n, _ in r["steps"]])
            total = {}
            for (n, (lo, hi)), s in zip(r["steps"], got["steps"]):
                want = breakdown(r["compute"], r["comm"], activity, lo, hi)
                for k, v in want.items():
                    ck.eq(f"{tag} step {n} {k}", s[k], v)
                    total[k] = total.get(k, 0) + v
                ck.pct(f"{tag} step {n} overlap_pct", s["overlap_pct"], 100.0 * want["overlap_ns"] / want["comm_ns"])
                ck.pct(f"{tag} step {n} exposed_fraction_pct", s["exposed_fraction_pct"], 100.0 * want["exposed_ns"] / want["step_ns"])
            # The steps do not overlap, so the all-steps row is their sum.
            for k, v in total.items():
                ck.eq(f"{tag} all steps {k}", got["all_steps"][k], v)
            # Collectives: count, bytes (nccl-tests': all-gather's gathered output, reduce-scatter's input, as
            # the trainer writes in args.bytes), the kernels' summed time, algbw = bytes / time, busbw =
            # algbw x (n-1)/n.
            # Each collective's args.bytes is what nccl-tests counts for it: the unit's whole (padded) parameters
            # in the run's 4-byte fp32 (run_config), gathered (all-gather output) or reduced (reduce-scatter
            # input).
            dtype_bytes = {"fp32": 4, "bf16": 2, "fp16": 2}
            cfg = r["run_config"]
            padded = {u["id"]: u["padded_params"] for u in cfg["units"]}
            ck.eq(f"{tag} every collective's bytes = its unit's padded params x {cfg['param_dtype']} size",
                  [e["bytes"] for e in r["ag"] + r["rs"]], [padded[e["unit"]] * dtype_bytes[cfg["param_dtype"]] for e in r["ag"] + r["rs"]])
            colls = {c["kind"]: c for c in got["collectives"]}
            for kind in ("all_gather", "reduce_scatter"):
                evs = r["ag" if kind == "all_gather" else "rs"]
                n = evs[0]["group"]
                b, t = sum(e["bytes"] for e in evs), sum(e["end"] - e["start"] for e in evs)
                c = colls[kind]
                ck.eq(f"{tag} {kind} count", c["count"], len(evs))
                ck.eq(f"{tag} {kind} bytes", c["bytes"], b)
                ck.eq(f"{tag} {kind} time_ns", c["time_ns"], t)
                ck.eq(f"{tag} {kind} group_size", c["group_size"], n)
                ck.near(f"{tag} {kind} algbw_gbps", c["algbw_gbps"], b / t, rel=1e-9)  # bytes/ns = GB/s (1e9)
                ck.near(f"{tag} {kind} busbw_gbps", c["busbw_gbps"], b / t * bus_factor(kind, n), rel=1e-9)
            # BACKWARD_PRE: every pair's numbers, each step's verdict, the rank's verdict.
            p = pre_by_rank[r["rank"]]
            mine = prefetch_rows(r)
            ck.eq(f"{tag} prefetch steps", [s["step"] for s in p["steps"]], [s["step"] for s in mine])
            for s, m in zip(p["steps"], mine):
                ck.eq(f"{tag} step {m['step']} prefetch pairs", [(u["unit"], u["next_unit"]) for u in s["units"]],
                      [(x["unit"], x["next_unit"]) for x in m["rows"]])
                for u, x in zip(s["units"], m["rows"]):
                    for k in ("issue_lead_ns", "all_gather_ns", "exposed_wait_ns", "queued_ns"):
                        ck.eq(f"{tag} step {m['step']} unit {x['unit']} {k}", u[k], x[k])
                    ck.near(f"{tag} step {m['step']} unit {x['unit']} hidden_share", u["hidden_share"], x["hidden_ns"] / x["all_gather_ns"], rel=1e-9)
                    peer = late_peer(r, other, x["ag"])
                    ck.eq(f"{tag} step {m['step']} unit {x['unit']} late_peer", u["late_peer"], peer[0] if peer else None)
                    # On the wall clock through each rank's clock pairs (offsets interpolated exactly here,
                    # shardscope keeps whole ns): equal to within 1 ns.
                    ck.near(f"{tag} step {m['step']} unit {x['unit']} late_peer_ns", u["late_peer_ns"], float(peer[1]) if peer else 0, rel=0.0, abs_=1)
                    cause = pair_cause(x, peer)
                    x["cause"] = cause
                    ck.eq(f"{tag} step {m['step']} unit {x['unit']} cause", u["cause"], cause)
                ck.eq(f"{tag} step {m['step']} cause", s["cause"], step_cause(m))
                ck.near(f"{tag} step {m['step']} hidden_share", s["hidden_share"], m["hidden_ns"] / m["ag_ns"], rel=1e-9)
                ck.eq(f"{tag} step {m['step']} verdict", s["verdict"], "effective" if m["effective"] else "not effective")
            v = run_verdict(mine)
            verdicts.append(v)
            ck.eq(f"{tag} run verdict", p["verdict"], "effective" if v else "not effective")
        # Stragglers: the n-th all-gather (reduce-scatter) of each rank is one instance (no sequence numbers:
        # "position"); arrivals on the wall clock as for the late peer; the last rank and by how much it
        # trailed the other, to within 1 ns; per rank, times last and total and maximum lateness.
        st = report["stragglers"]
        ck.eq(f"{run}: straggler pairing", st["pairing"], "position")
        mine = []
        for kind in ("all_gather", "reduce_scatter"):
            key = "ag" if kind == "all_gather" else "rs"
            for k in range(min(len(r[key]) for r in ranks)):
                a = [wall(r, r[key][k]["start"]) for r in ranks]
                mine.append((kind, k, ranks[0]["rank"] if a[0] > a[1] else ranks[1]["rank"], abs(a[0] - a[1])))
        ck.eq(f"{run}: straggler instances", [(i["kind"], i["ordinal"], i["last_rank"]) for i in st["instances"]], [m[:3] for m in mine])
        worst = max(abs(i["late_by_ns"] - float(m[3])) for i, m in zip(st["instances"], mine))
        ck.near(f"{run}: straggler late_by_ns, largest difference over the {len(mine)} instances", worst, 0.0, rel=0.0, abs_=1)
        for row in st["ranks"]:
            late = [m[3] for m in mine if m[2] == row["rank"]]
            ck.eq(f"{run}: straggler rank {row['rank']} times_last", row["times_last"], len(late))
            ck.near(f"{run}: straggler rank {row['rank']} total_late_by_ns", row["total_late_by_ns"], float(sum(late)), rel=0.0, abs_=len(late))
            ck.near(f"{run}: straggler rank {row['rank']} max_late_by_ns", row["max_late_by_ns"], float(max(late, default=0)), rel=0.0, abs_=1)
        # The whole check: not effective when any rank is; exit 0 effective, 1 not.
        ck.eq(f"{run}: check-prefetch exit status", prc, 0 if all(verdicts) else 1)
    ck.done()


if __name__ == "__main__":
    main()
