#!/usr/bin/env python3
"""The MoE golden case's numbers worked out by hand from its trace events (README.md beside this file says
how), compared with `shardscope report --format json` on the same rank file.

usage: by_hand.py SHARDSCOPE
"""

import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from by_hand_common import Checks, breakdown, gpu_step_windows, kineto_rank, shardscope_json  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def deep_ep_kind(name):
    """DeepEP's kernels (namespace deep_ep::) are its all-to-all's halves, by the function's own name (before
    its parameter list); its layout kernel only counts tokens on its own GPU: compute, as every other kernel."""
    own = name.split("(")[0]
    if "deep_ep::" not in own or "get_dispatch_layout" in own:
        return None
    return "all_to_all_combine" if "combine" in own else "all_to_all_dispatch" if "dispatch" in own else "all_to_all"


def main():
    binary = os.path.abspath(sys.argv[1])
    ck = Checks("moe_deepep")
    report, rc, _ = shardscope_json(binary, ["report", "--format", "json", "."], HERE)
    ck.eq("report exit status", rc, 0)
    r = kineto_rank(os.path.join(HERE, "rank5.json"))
    for x in r["device"]:
        x["kind"] = deep_ep_kind(x["name"])
        x["cls"] = "communication" if x["kind"] else "compute"
    got = report["ranks"][0]
    ck.eq("rank", got["rank"], 5)
    compute = [(x["start"], x["end"]) for x in r["device"] if x["cls"] == "compute"]
    comm = [(x["start"], x["end"]) for x in r["device"] if x["cls"] == "communication"]
    activity = [(x["start"], x["end"]) for x in r["device"]]
    windows = gpu_step_windows(r)
    ck.eq("steps", [s["step"] for s in got["steps"]], [n for n, _, _ in windows])
    for (n, lo, hi), s in zip(windows, got["steps"]):
        want = breakdown(compute, comm, activity, lo, hi)
        for k, v in want.items():
            ck.eq(f"step {n} {k}", s[k], v)
        ck.pct(f"step {n} overlap_pct", s["overlap_pct"], 100.0 * want["overlap_ns"] / want["comm_ns"])
    colls = {c["kind"]: c for c in got["collectives"]}
    kinds = sorted({x["kind"] for x in r["device"] if x["kind"]})
    ck.eq("collective kinds", sorted(colls), kinds)
    for kind in kinds:
        of = [x for x in r["device"] if x["kind"] == kind]
        ck.eq(f"{kind} count", colls[kind]["count"], len(of))
        ck.eq(f"{kind} time_ns", colls[kind]["time_ns"], sum(x["end"] - x["start"] for x in of))
        for k in ("bytes", "busbw_gbps", "group_size"):  # DeepEP's kernels carry no size or group
            ck.eq(f"{kind} {k} (not in the trace)", colls[kind][k], None)
    # The longest device activity is DeepEP's combine, and it is communication.
    ck.eq("longest device activity's class", got["top_device"][0]["class"], "communication")
    ck.eq("its name is combine's", "deep_ep::internode::combine" in got["top_device"][0]["name"], True)
    # Communication is recognised, so no "no communication recognised" warning, though world_size is 64.
    ck.eq("warnings", report["warnings"], [])
    ck.done()


if __name__ == "__main__":
    main()
