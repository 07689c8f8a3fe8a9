#!/usr/bin/env python3
"""The cut-off trace's numbers worked out by hand from its bytes (README.md beside this file says how),
compared with `shardscope report --format json` and `check-prefetch --format json`.

usage: by_hand.py SHARDSCOPE
"""

import json
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from by_hand_common import Checks, shardscope_json  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TRACE = os.path.join(HERE, "cut.json")


def main():
    binary = os.path.abspath(sys.argv[1])
    ck = Checks("truncated")
    raw = open(TRACE, "rb").read()
    lines = raw.decode("utf-8").split("\n")
    # The writer puts the header and `"traceEvents":[` on line 1, then one event a line, each ending ",".
    # The last line is the one the cut went through: every line before it is a whole event.
    events = [json.loads(line.rstrip(",")) for line in lines[1:-1]]
    try:
        json.loads(lines[-1].rstrip(","))
        ck.eq("the last line is cut", False, True)
    except json.JSONDecodeError:
        pass
    report, rc, _ = shardscope_json(binary, ["report", "--format", "json", "cut.json"], HERE)
    ck.eq("report exit status (a cut file still loads)", rc, 0)
    warning = report["warnings"][0]
    ck.eq("cut at byte (the file's size)", f"cut off at byte {len(raw)} " in warning, True)
    ck.eq("parse error on the cut line", f"at line {len(lines)}," in warning, True)
    ck.eq("whole events read before the cut", f"read the {len(events)} whole events before the cut" in warning, True)
    r = report["ranks"][0]
    ck.eq("events kept (complete X events)", r["events"], sum(1 for e in events if e["ph"] == "X"))
    # Every whole event is a host-side driver call or metadata: no device event, no step, nothing to check.
    device = [e for e in events if e.get("cat") in ("kernel", "memcpy", "memset", "sync", "comm")]
    ck.eq("device events before the cut", device, [])
    ck.eq("whole trace (no device events)", (r["whole_trace"], "whole_trace" in r["na"]), (None, True))
    ck.eq("steps", r["steps"], [])
    ck.eq("collectives", r["collectives"], [])
    prefetch, prc, _ = shardscope_json(binary, ["check-prefetch", "--format", "json", "cut.json"], HERE)
    ck.eq("check-prefetch (nothing to check): exit status and verdict", (prc, prefetch["ranks"][0]["verdict"]), (2, "n/a"))
    ck.done()


if __name__ == "__main__":
    main()
