"""Holds the reports of gpu_device_memory.sh's two runs (in OUT_DIR) to the device's memory; exit 1 on a
miss. Shares no code with shardscope: it reads the report's JSON and inject_memory.py's own figures."""
import json, sys

out = sys.argv[1]
failed = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failed.append(what)


def rows(report):
    """rank 0's memory rows, by category, at the fullest moment"""
    def find(o):
        if isinstance(o, dict):
            if "memory" in o and isinstance(o["memory"], dict) and "rows" in o["memory"]:
                return o["memory"]["rows"]
            for v in o.values():
                if (r := find(v)) is not None:
                    return r
        elif isinstance(o, list):
            for v in o:
                if (r := find(v)) is not None:
                    return r
        return None
    return {r["category"]: r.get("at_fullest_bytes") for r in find(report) or []}


def within(a, b, share=0.01):
    return a is not None and b is not None and abs(a - b) <= share * abs(b)


t = rows(json.load(open(f"{out}/trainer_report.json")))
total = t.get("allocator_total")
parts = sum(v for k, v in t.items() if k != "allocator_total" and v is not None)
print("trainer at the fullest moment:", {k: v for k, v in t.items()})
check(all(k in t for k in ("cached_free", "other_allocated", "outside_allocator")), "trainer: the rest split three ways")
check((t.get("outside_allocator") or 0) > 0, "trainer: outside_allocator positive")
check(within(parts, total), f"trainer: rows add up to the device's used memory ({parts} of {total})")

i = rows(json.load(open(f"{out}/inject_report.json")))
truth = json.loads(open(f"{out}/inject_truth.json").read().strip().splitlines()[-1])
print("injected at the fullest moment:", i, "PyTorch:", truth)
check(within(i.get("allocator_total"), truth["device_used_bytes"]), "inject: device total = the driver's used memory")
check(within(i.get("allocator_reserved"), truth["reserved_bytes"]), "inject: allocator_reserved = PyTorch's reserved")
check((i.get("outside_allocator") or 0) > 0, "inject: outside_allocator positive")
check(within((i.get("allocator_reserved") or 0) + (i.get("outside_allocator") or 0), i.get("allocator_total")),
      "inject: rows add up to the device's used memory")
sys.exit(1 if failed else 0)
