"""Measured memory worked out by hand from a PyTorch profiler trace, sharing no code with shardscope: the
numbers tests/analyzer/memory_measured_test.cc checks shardscope against.

For each file: the CUDA `[memory]` instant events (args Bytes, Total Allocated, Total Reserved, Addr), in
time order; per ProfilerStep#N (the CPU range, cat user_annotation) the largest Total Allocated and Total
Reserved of the events inside it; the rank's peak (the first event at the largest Total Allocated) and its
step; what was allocated before the trace began (the first event's Total Allocated less its own Bytes); and
the allocations alive at the peak (paired with their frees by Addr) grouped by the CPU ranges around the
allocation on its own thread:
  all_gather      inside FSDP::all_gather*, FSDP1's _pre_forward*/_pre_backward* hooks, or a range whose
                  name holds all_gather/allgather (c10d::allgather_, nccl:_all_gather_base)
  reduce_scatter  inside FSDP::post_backward_reduce, FSDP1's _post_backward_hook, or a range whose name
                  holds reduce_scatter/reducescatter
  optimizer       inside the trace's first Optimizer.step#... range
  activations     allocated in a step's forward (before its first autograd::engine::evaluate_function),
                  freed in the same step's backward (before its first Optimizer.step)
  other           the rest
Frees of addresses allocated before the trace began come off the before-trace bytes.
Where a <file stem>_truth.json sits beside the trace (tests/data/torch211_fsdp_memory), each step's peaks
must equal torch.cuda.max_memory_allocated()/max_memory_reserved() there; the script exits 1 if not.

  python3 by_hand.py FILE.json.gz...    (stdlib only)
"""
import bisect, gzip, json, os, sys


def is_all_gather(name):  # FSDP1 allocates the unsharded parameter in its pre-forward/pre-backward hooks
    n = name.lower()
    return (name.startswith("FSDP::all_gather") or "all_gather" in n or "allgather" in n
            or name.startswith("FullyShardedDataParallel._pre_forward")
            or name.startswith("FullyShardedDataParallel._pre_backward"))


def is_reduce_scatter(name):
    n = name.lower()
    return (name.startswith("FSDP::post_backward_reduce") or "reduce_scatter" in n or "reducescatter" in n
            or name.startswith("FullyShardedDataParallel._post_backward_hook"))


def analyse(path):
    with gzip.open(path) if path.endswith(".gz") else open(path) as f:
        trace = json.load(f)
    ev = trace["traceEvents"] if isinstance(trace, dict) else trace
    mem = [e for e in ev if e.get("name") == "[memory]" and e.get("args", {}).get("Device Type") == 1]
    mem.sort(key=lambda e: e["ts"])  # stable: file order among equal times
    steps = sorted((e["ts"], e["ts"] + e["dur"], int(e["name"].split("#")[1])) for e in ev
                   if e.get("ph") == "X" and e.get("cat") == "user_annotation"
                   and e.get("name", "").startswith("ProfilerStep#"))
    ranges = {}  # (pid, tid) -> [(start, end, name)] of CPU ranges
    for e in ev:
        if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation", "python_function"):
            ranges.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e.get("dur", 0), e["name"]))
    for r in ranges.values():
        r.sort()
    opt = sorted(e["ts"] for e in ev if e.get("ph") == "X" and e.get("name", "").startswith("Optimizer.step#"))
    first_opt = next((e for e in ev if e.get("ph") == "X" and e.get("name", "").startswith("Optimizer.step#")
                      and e["ts"] == opt[0]), None) if opt else None
    backward = sorted(e["ts"] for e in ev if e.get("ph") == "X"
                      and e.get("name", "").startswith("autograd::engine::evaluate_function"))

    def step_of(ts):
        for a, b, n in steps:
            if a <= ts < b:
                return n, a, b
        return None

    out = {"file": path, "records": len(mem), "steps": {}}
    if not mem:
        return out
    a0 = mem[0]["args"]
    out["before_trace"] = a0["Total Allocated"] - a0["Bytes"]
    for a, b, n in steps:
        inside = [e["args"] for e in mem if a <= e["ts"] < b]
        if inside:
            out["steps"][n] = (max(x["Total Allocated"] for x in inside), max(x["Total Reserved"] for x in inside))
    peak_i = max(range(len(mem)), key=lambda i: (mem[i]["args"]["Total Allocated"], -i))
    pk = mem[peak_i]
    out["peak"] = pk["args"]["Total Allocated"]
    out["peak_reserved"] = max(e["args"]["Total Reserved"] for e in mem)
    s = step_of(pk["ts"])
    out["peak_step"] = s[0] if s else None
    # Pair allocations with frees by address, in time order.
    live, freed_at, before_freed = {}, {}, 0
    for i, e in enumerate(mem):
        b, addr = e["args"]["Bytes"], e["args"]["Addr"]
        if b > 0:
            live[addr] = i
        elif b < 0:
            if addr in live:
                freed_at[live.pop(addr)] = i
            elif i <= peak_i:
                before_freed -= b
    groups = {k: 0 for k in ("all_gather", "reduce_scatter", "optimizer", "activations", "other")}
    counts = dict.fromkeys(groups, 0)
    for i in range(peak_i + 1):
        e = mem[i]
        b = e["args"]["Bytes"]
        if b <= 0 or freed_at.get(i, len(mem)) <= peak_i:
            continue
        ts = e["ts"]
        around = [name for (st, en, name) in ranges.get((e["pid"], e["tid"]), []) if st <= ts <= en]
        st = step_of(ts)
        if any(is_all_gather(n) for n in around):
            g = "all_gather"
        elif any(is_reduce_scatter(n) for n in around):
            g = "reduce_scatter"
        elif first_opt and first_opt["ts"] <= ts <= first_opt["ts"] + first_opt["dur"] \
                and any(n.startswith("Optimizer.step#") for n in around):
            g = "optimizer"
        else:
            g = "other"
            if st and i in freed_at:
                _, sa, sb = st
                bw = [t for t in backward if sa <= t < sb]
                op = [t for t in opt if sa <= t < sb]
                bw0 = bw[0] if bw else None
                end_bw = op[0] if op else sb
                free_ts = mem[freed_at[i]]["ts"]
                if bw0 is not None and ts < bw0 and bw0 <= free_ts < end_bw:
                    g = "activations"
        groups[g] += b
        counts[g] += 1
    out["before_trace_left"] = out["before_trace"] - before_freed
    out["alive"] = groups
    out["alive_count"] = counts
    out["chain_breaks"] = sum(1 for x, y in zip(mem, mem[1:])
                              if x["args"]["Total Allocated"] + y["args"]["Bytes"] != y["args"]["Total Allocated"])
    out["accounted"] = sum(groups.values()) + out["before_trace_left"]
    return out


def main(paths):
    bad = 0
    for p in paths:
        r = analyse(p)
        print(f"{p}: {r['records']} CUDA [memory] events")
        if not r["records"]:
            continue
        print(f"  peak {r['peak']} in step {r['peak_step']}; peak reserved {r['peak_reserved']}; "
              f"allocated before the trace {r['before_trace']} ({r['before_trace_left']} of it still at the peak)")
        print("  alive at the peak: " + ", ".join(f"{k} {v} ({r['alive_count'][k]})" for k, v in r["alive"].items()))
        print(f"  events whose total is not the previous total plus their bytes: {r['chain_breaks']}")
        if r["accounted"] != r["peak"]:
            print(f"  MISMATCH: alive + before-trace = {r['accounted']}, not the peak {r['peak']}")
            bad = 1
        stem = p[:-len(".json.gz")] if p.endswith(".json.gz") else os.path.splitext(p)[0]
        truth = {}
        if os.path.exists(stem + "_truth.json"):
            with open(stem + "_truth.json") as f:
                truth = {s["step"]: s for s in json.load(f)["steps"]}
        for n, (pa, pr) in sorted(r["steps"].items()):
            t = truth.get(n)
            check = ""
            if t:
                ok = t["peak_allocated"] == pa and t["peak_reserved"] == pr
                check = " = truth" if ok else f" TRUTH {t['peak_allocated']} {t['peak_reserved']}"
                bad |= not ok
            print(f"  step {n}: peak allocated {pa}, reserved {pr}{check}")
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
