#!/usr/bin/env python3
"""The BACKWARD_PRE verdict's rules, each on a constructed trace whose times are chosen so the answer is
known before shardscope runs: every cause of a pair that is not hidden, every n/a reason, the 0.5 threshold
on both sides, and the run rule's majority and tie. Each case writes trace files in shardscope's own format
(a CPU trainer's: compute ranges on one thread, collectives on another, with their unit and issue time),
runs `shardscope check-prefetch --format json` on them and asserts the verdict, the cause and the numbers,
worked out below by hand from the constructed times (docs/check-prefetch.md, docs/spec.md).

usage: constructed.py SHARDSCOPE [CASE...]
"""

import json
import os
import subprocess
import sys
import tempfile

US = 1000  # ns
STEP = 10_000 * US  # each step's length; step k starts at T0 + k * STEP
T0 = 1_000_000 * US

# One step's backward, relative to its start (µs): the backward phase begins at 100; unit 2's own all-gather
# AG_2 (issued at 100, [100, 110)) makes unit 2 one of the re-gathered units; BC_2, unit 2's backward compute,
# runs [200, 1200); BC_1 runs [3000, 3500). The pair judged is (unit 2, AG of unit 1): AG_1, placed by each case.
BWD, BC2, BC2_END, BC1, BC1_END = 100, 200, 1200, 3000, 3500


def fmt_us(t_ns):
    """Integer ns as the trace's µs with 3 decimals, exactly."""
    return f"{t_ns // 1000}.{t_ns % 1000:03d}"


class Rank:
    """One rank's trace in the trainer's format."""

    def __init__(self, rank, world=1, prefetch="pre", limit_all_gathers=None):
        self.rank, self.world, self.prefetch, self.events, self.steps = rank, world, prefetch, [], 0
        self.limit = limit_all_gathers

    def x(self, tid, name, cat, ts, dur, args=None):
        self.events.append((tid, name, cat, ts, dur, args or {}))

    def instant(self, tid, name, cat, ts, args):
        self.events.append((tid, name, cat, ts, None, args))

    def step(self, ag1=None, rs=None, units=(2, 1), tagged=True, ag2_dur=10):
        """Adds one step. ag1 = (issued, start, dur) in µs from the step start, the all-gather of unit 1 issued
        for backward; rs = (start, end) µs of a reduce-scatter on the all-gather's own thread; units: whose
        unit_backward ranges to write; tagged: whether the all-gathers name their unit; ag2_dur: AG_2's length."""
        s = T0 + self.steps * STEP
        n = self.steps
        self.steps += 1
        self.x(1, "step", "step", s, 5000 * US, {"step": n})
        self.x(1, "unit_forward", "compute", s + 10 * US, 50 * US, {"unit": 1})
        self.x(1, "backward", "phase", s + BWD * US, 4800 * US)
        unit = (lambda u: {"unit": u}) if tagged else (lambda u: {})
        coll = lambda u, issued: dict(unit(u), bytes=4000, group_size=self.world, issued_ns=s + issued * US)
        self.x(2, "all_gather", "comm", s + BWD * US, ag2_dur * US, coll(2, BWD))
        if 2 in units:
            self.x(1, "unit_backward", "compute", s + BC2 * US, (BC2_END - BC2) * US, {"unit": 2})
        if rs:
            self.x(2, "reduce_scatter", "comm", s + rs[0] * US, (rs[1] - rs[0]) * US, dict(bytes=4000, group_size=self.world, issued_ns=s + rs[0] * US))
        if ag1:
            issued, start, dur = ag1
            self.x(2, "all_gather", "comm", s + start * US, dur * US, coll(1, issued))
        if 1 in units:
            self.x(1, "unit_backward", "compute", s + BC1 * US, (BC1_END - BC1) * US, {"unit": 1})
        return s

    def write(self, path):
        header = {"schema_version": 1, "rank": self.rank, "world_size": self.world,
                  "clock": {"domain": "CLOCK_MONOTONIC", "unit": "ns", "sync": {"monotonic_ns": T0, "realtime_ns": 1_700_000_000_000_000_000 + T0, "bracket_ns": 100}},
                  "run_config": {"sharding": "full_shard", "backward_prefetch": self.prefetch, "world_size": self.world}}
        if self.limit:
            header["run_config"]["limit_all_gathers"] = self.limit
        lines = [json.dumps({"ph": "M", "name": "thread_name", "pid": self.rank, "tid": t, "args": {"name": n}})
                 for t, n in ((1, "compute"), (2, "comm: all-gather"))]
        for tid, name, cat, ts, dur, args in sorted(self.events, key=lambda e: e[3]):
            if dur is None:
                lines.append(f'{{"ph":"i","name":"{name}","cat":"{cat}","pid":{self.rank},"tid":{tid},"ts":{fmt_us(ts)},"s":"t","args":{json.dumps(args)}}}')
                continue
            lines.append(f'{{"ph":"X","name":"{name}","cat":"{cat}","pid":{self.rank},"tid":{tid},"ts":{fmt_us(ts)},"dur":{fmt_us(dur)},"args":{json.dumps(args)}}}')
        with open(path, "w") as f:
            f.write('{"shardscope":' + json.dumps(header) + ',"displayTimeUnit":"ns","traceEvents":[\n' + ",\n".join(lines) + "\n]}\n")


def check_prefetch(binary, ranks):
    with tempfile.TemporaryDirectory() as d:
        for r in ranks:
            r.write(os.path.join(d, f"trace.rank{r.rank}.json"))
        p = subprocess.run([binary, "check-prefetch", "--format", "json", d], capture_output=True, text=True, env=dict(os.environ, SHARDSCOPE_PLUGIN_PATH=""))
    try:
        return json.loads(p.stdout), p.returncode
    except json.JSONDecodeError:
        return {"stdout": p.stdout, "stderr": p.stderr}, p.returncode


class Case:
    def __init__(self, name):
        self.name, self.failed = name, []

    def eq(self, what, got, want):
        ok = got == want
        print(f"  {'ok  ' if ok else 'FAIL'} {what}: shardscope {got!r}, expected {want!r}")
        if not ok:
            self.failed.append(what)


def one_pair(c, out, rc, cause, lead, ag, hidden, exposed, queued, verdict="not effective"):
    """The one step of a one-step trace and its one pair (unit 2, AG of unit 1): verdict, cause, numbers (µs)."""
    r = out["ranks"][0]
    s = r["steps"][0]
    u = s["units"][0]
    c.eq("pairs", [(x["unit"], x["next_unit"]) for x in s["units"]], [(2, 1)])
    c.eq("step verdict", s["verdict"], verdict)
    c.eq("step cause", s["cause"], cause)
    c.eq("pair cause", u["cause"], cause)
    c.eq("issue lead ns", u["issue_lead_ns"], lead * US)
    c.eq("all-gather ns", u["all_gather_ns"], ag * US)
    c.eq("hidden share", u["hidden_share"], hidden / ag)
    c.eq("exposed wait ns", u["exposed_wait_ns"], exposed * US)
    c.eq("queued ns", u["queued_ns"], queued * US)
    c.eq("run verdict (one step: no warm-up to leave out)", r["verdict"], verdict)
    c.eq("exit status", rc, 0 if verdict == "effective" else 1)
    return u


# ---- the causes, in the order docs/check-prefetch.md reads them off the timeline ----

def issued_late(b, c):
    # AG_1 issued 100 µs after BC_2 began (at 300), runs [300, 800) under BC_2: all 500 µs hidden, but late.
    r = Rank(0)
    r.step(ag1=(300, 300, 500))
    out, rc = check_prefetch(b, [r])
    one_pair(c, out, rc, "issued late", lead=-100, ag=500, hidden=500, exposed=0, queued=0)


def behind_reduce_scatter(b, c):
    # Issued at 150 (50 µs before BC_2), it waits on its own thread behind a reduce-scatter [140, 1100), then
    # runs [1100, 1400): 100 of 300 µs under BC_2, 33 %; queued 950 µs; exposed [1200, 1400) = 200 µs.
    r = Rank(0)
    r.step(ag1=(150, 1100, 300), rs=(140, 1100))
    out, rc = check_prefetch(b, [r])
    u = one_pair(c, out, rc, "behind reduce-scatter", lead=50, ag=300, hidden=100, exposed=200, queued=950)
    c.eq("serialized behind a reduce-scatter", u["serialized_behind_reduce_scatter"], True)


def started_late(b, c):
    # Issued at 150, in time, behind nothing, it starts only when BC_2 has ended (1200): [1200, 1500), none of
    # it hidden, all 300 µs exposed before BC_1 (3000); queued 1050 µs.
    r = Rank(0)
    r.step(ag1=(150, 1200, 300))
    out, rc = check_prefetch(b, [r])
    u = one_pair(c, out, rc, "started late", lead=50, ag=300, hidden=0, exposed=300, queued=1050)
    c.eq("serialized behind a reduce-scatter", u["serialized_behind_reduce_scatter"], False)


def longer_than_compute(b, c):
    # Issued and run at 195, 2500 µs against BC_2's 1000: [200, 1200) hidden, 40 %; exposed 5 + 1495 µs.
    r = Rank(0)
    r.step(ag1=(195, 195, 2500))
    out, rc = check_prefetch(b, [r])
    one_pair(c, out, rc, "longer than compute", lead=5, ag=2500, hidden=1000, exposed=1500, queued=0)


def no_compute_under_it(b, c):
    # Issued and run at 120, 50 µs long, shorter than BC_2, but done before BC_2 (200) began: nothing under it.
    r = Rank(0)
    r.step(ag1=(120, 120, 50))
    out, rc = check_prefetch(b, [r])
    one_pair(c, out, rc, "no compute under it", lead=80, ag=50, hidden=0, exposed=50, queued=0)


def late_peer(b, c):
    # Both ranks run the same two all-gathers (AG_2, then AG_1: matched by order, one process group) and the
    # same clock pair. On rank 0 AG_1 is longer than compute as above (exposed 1500 µs); rank 1 starts it
    # 1000 µs later (at 1195): at least half of rank 0's exposed wait, so rank 0's cause is the late peer, rank 1
    # by 1000 µs. Rank 1's own AG_1 [1195, 3695) has 5 µs under BC_2 and 500 under BC_1 [3000, 3500): 20.2 %
    # hidden, longer than compute, and no later peer for it.
    r0, r1 = Rank(0, world=2), Rank(1, world=2)
    r0.step(ag1=(195, 195, 2500))
    r1.step(ag1=(195, 1195, 2500))
    out, rc = check_prefetch(b, [r0, r1])
    by = {r["rank"]: r for r in out["ranks"]}
    u0 = by[0]["steps"][0]["units"][0]
    c.eq("rank 0 pair cause", u0["cause"], "late peer")
    c.eq("rank 0 step cause", by[0]["steps"][0]["cause"], "late peer")
    c.eq("rank 0 late peer", u0["late_peer"], 1)
    c.eq("rank 0 late peer ns", u0["late_peer_ns"], 1000 * US)
    c.eq("rank 0 exposed wait ns", u0["exposed_wait_ns"], 1500 * US)
    c.eq("rank 0 hidden share", u0["hidden_share"], 1000 / 2500)
    u1 = by[1]["steps"][0]["units"][0]
    c.eq("rank 1 late peer (none later)", u1["late_peer"], None)
    c.eq("rank 1 pair cause", u1["cause"], "longer than compute")
    c.eq("rank 1 hidden share", u1["hidden_share"], 505 / 2500)
    c.eq("the check (any rank not effective)", (out["verdict"], rc), ("not effective", 1))


def late_peer_under_half(b, c):
    # As above, but rank 1 starts AG_1 only 700 µs later: under half of rank 0's 1500 µs exposed wait, so the
    # peer is named beside the pair but the cause stays longer than compute.
    r0, r1 = Rank(0, world=2), Rank(1, world=2)
    r0.step(ag1=(195, 195, 2500))
    r1.step(ag1=(195, 895, 2500))
    out, rc = check_prefetch(b, [r0, r1])
    u0 = {r["rank"]: r for r in out["ranks"]}[0]["steps"][0]["units"][0]
    c.eq("rank 0 late peer", (u0["late_peer"], u0["late_peer_ns"]), (1, 700 * US))
    c.eq("rank 0 pair cause", u0["cause"], "longer than compute")


def rate_limiter(b, c):
    # limit_all_gathers = 1. AG_2 [100, 110) is in flight when unit 1's prefetch is due: the trainer's
    # rate_limited instant at 105 (unit 1), AG_1 issued when AG_2 completes, at 110, in time (lead 90 µs), then
    # [110, 2610): 1000 of 2500 µs under BC_2, 40 %. Held by the limiter: the cause, before started late or
    # longer than compute.
    r = Rank(0, limit_all_gathers=1)
    s = r.step(ag1=(110, 110, 2500))
    r.instant(1, "rate_limited", "fsdp", s + 105 * US, {"unit": 1})
    out, rc = check_prefetch(b, [r])
    u = one_pair(c, out, rc, "rate limiter", lead=90, ag=2500, hidden=1000, exposed=1500, queued=0)
    c.eq("throttled by the rate limiter", u["throttled_by_rate_limiter"], True)
    c.eq("limit_all_gathers", out["ranks"][0]["limit_all_gathers"], 1)


def rate_limiter_late(b, c):
    # As above, but AG_2 runs [100, 300): the limiter (hit at 150) holds unit 1's prefetch until 300, after BC_2
    # began at 200: issued late because of the limiter, so the cause is the limiter (lead -100 µs).
    r = Rank(0, limit_all_gathers=1)
    s = r.step(ag1=(300, 300, 500), ag2_dur=200)
    r.instant(1, "rate_limited", "fsdp", s + 150 * US, {"unit": 1})
    out, rc = check_prefetch(b, [r])
    one_pair(c, out, rc, "rate limiter", lead=-100, ag=500, hidden=500, exposed=0, queued=0)


def rate_limiter_off(b, c):
    # The same timeline without the limiter's instant and limit: plainly issued late.
    r = Rank(0)
    r.step(ag1=(300, 300, 500), ag2_dur=200)
    out, rc = check_prefetch(b, [r])
    one_pair(c, out, rc, "issued late", lead=-100, ag=500, hidden=500, exposed=0, queued=0)


def started_late_with_a_late_peer(b, c):
    # Rank 0's AG_1 is issued in time (150) and starts only when BC_2 has ended (1200): started late, 300 µs
    # exposed. Rank 1 starts the same all-gather at 1400, 200 µs later: more than half of rank 0's exposed wait.
    # docs/check-prefetch.md reads a late peer off before "started late" (a late peer can make the pair start
    # late; the peer is what to fix): late peer.
    r0, r1 = Rank(0, world=2), Rank(1, world=2)
    r0.step(ag1=(150, 1200, 300))
    r1.step(ag1=(150, 1400, 300))
    out, rc = check_prefetch(b, [r0, r1])
    u0 = {r["rank"]: r for r in out["ranks"]}[0]["steps"][0]["units"][0]
    c.eq("rank 0 late peer", (u0["late_peer"], u0["late_peer_ns"]), (1, 200 * US))
    c.eq("rank 0 exposed wait ns", u0["exposed_wait_ns"], 300 * US)
    c.eq("rank 0 pair cause", u0["cause"], "late peer")


# ---- the 0.5 threshold, on one step ----

def threshold_half(b, c):
    # AG_1 issued and run at 150, 50 µs before BC_2 [200, 1200), 100 µs long: [200, 250) under BC_2, exactly 50
    # of 100 µs hidden, 50 %: effective (at least half), no cause; exposed [150, 200) = 50 µs.
    r = Rank(0)
    r.step(ag1=(150, 150, 100))
    out, rc = check_prefetch(b, [r])
    one_pair(c, out, rc, None, lead=50, ag=100, hidden=50, exposed=50, queued=0, verdict="effective")


def threshold_just_under_half(b, c):
    # The same all-gather 1 ns earlier, [149.999, 249.999): 49.999 of 100 µs under BC_2, under 50 %: not
    # effective. It was issued in time, ran at once, is shorter than BC_2 and ran partly while no compute ran:
    # no compute under it; exposed 50.001 µs.
    r = Rank(0)
    s = r.step()
    r.x(2, "all_gather", "comm", s + 150 * US - 1, 100 * US, {"unit": 1, "bytes": 4000, "group_size": 1, "issued_ns": s + 150 * US - 1})
    out, rc = check_prefetch(b, [r])
    st = out["ranks"][0]["steps"][0]
    u = st["units"][0]
    c.eq("step verdict", st["verdict"], "not effective")
    c.eq("issue lead ns", u["issue_lead_ns"], 50 * US + 1)
    c.eq("hidden share", u["hidden_share"], (50 * US - 1) / (100 * US))
    c.eq("pair cause", u["cause"], "no compute under it")
    c.eq("exposed wait ns", u["exposed_wait_ns"], 50 * US + 1)
    c.eq("exit status", rc, 1)


# ---- the n/a reasons ----

def na_no_unit_compute(b, c):
    # All-gathers but no unit_backward range: nothing to pair, the rank is n/a; nothing to check anywhere: exit 2.
    r = Rank(0)
    r.step(ag1=(150, 150, 300), units=())
    out, rc = check_prefetch(b, [r])
    p = out["ranks"][0]
    c.eq("rank verdict", p["verdict"], "n/a")
    c.eq("rank reason", p["not_applicable"], 'no per-unit backward compute in this trace (no "unit_backward" ranges, no FSDP labels)')
    c.eq("exit status", rc, 2)


def na_no_unit_all_gathers(b, c):
    # unit_backward ranges but all-gathers that name no unit (NO_SHARD/SHARD_GRAD_OP, or an untagged trace).
    r = Rank(0)
    r.step(ag1=(150, 150, 300), tagged=False)
    out, rc = check_prefetch(b, [r])
    p = out["ranks"][0]
    c.eq("rank verdict", p["verdict"], "n/a")
    c.eq("rank reason", p["not_applicable"], "no all-gathers tagged with their unit: nothing is re-gathered for backward (NO_SHARD or "
         "SHARD_GRAD_OP), or the trace does not say which unit each all-gather is for")
    c.eq("exit status", rc, 2)


def na_fewer_than_two_units(b, c):
    # Only unit 2 is re-gathered in backward (no all-gather of unit 1 at all): one unit, no pair: the step is n/a.
    r = Rank(0)
    r.step(ag1=None)
    out, rc = check_prefetch(b, [r])
    s = out["ranks"][0]["steps"][0]
    c.eq("step verdict", s["verdict"], "n/a")
    c.eq("step units", s["units"], [])
    c.eq("step reason", s["not_applicable"], "1 unit(s) re-gathered for backward in this step; a prefetch needs two")
    c.eq("rank reason", out["ranks"][0]["reason"], "n/a: no step could be checked")
    c.eq("rank verdict", out["ranks"][0]["verdict"], "n/a")
    c.eq("exit status", rc, 2)


def na_no_backward_all_gather(b, c):
    # Units 2 and 1 are both re-gathered in backward, but unit 1's all-gather starts only after BC_1 began
    # (at 3100): the pair (2, 1) has no all-gather that BC_2 could have hidden: the step is n/a, 1 pair missing.
    r = Rank(0)
    r.step(ag1=(150, 3100, 100))
    out, rc = check_prefetch(b, [r])
    s = out["ranks"][0]["steps"][0]
    c.eq("step verdict", s["verdict"], "n/a")
    c.eq("step units", s["units"], [])
    c.eq("pairs without all-gather", s["pairs_without_all_gather"], 1)
    c.eq("step reason", s["not_applicable"], "none of the 1 unit pairs of this step has a backward all-gather")
    c.eq("rank verdict", out["ranks"][0]["verdict"], "n/a")
    c.eq("exit status", rc, 2)


# ---- the run rule: step 0 left out, a strict majority of the rest, a tie by the pooled hidden share ----

EFFECTIVE = (150, 200, 1000)       # [200, 1200) exactly under BC_2: 1000 of 1000 µs hidden
NOT_HIDDEN = (150, 1200, 300)      # started late: 0 of 300 µs hidden


def run_majority(b, c):
    # Steps 1 and 2 effective (1000 of 1000 µs each), step 3 started late, [1200, 6200), with only BC_1's 500 µs
    # under its 5000: 2 of 3 decide, effective, though only 2500 of 7000 µs (36 %) of the steady steps'
    # all-gather time is hidden. Step 0 is not effective and left out as warm-up.
    r = Rank(0)
    for ag1 in (NOT_HIDDEN, EFFECTIVE, EFFECTIVE, (150, 1200, 5000)):
        r.step(ag1=ag1)
    out, rc = check_prefetch(b, [r])
    p = out["ranks"][0]
    c.eq("step verdicts", [s["verdict"] for s in p["steps"]], ["not effective", "effective", "effective", "not effective"])
    c.eq("steady steps effective / not", (p["steady_steps_effective"], p["steady_steps_not_effective"]), (2, 1))
    c.eq("steady hidden share", p["steady_hidden_share"], 2500 / 7000)
    c.eq("run verdict", p["verdict"], "effective")
    c.eq("exit status", rc, 0)


def run_tie_at_half(b, c):
    # Step 1 effective (1000 of 1000 µs), step 2 started late (0 of 1000 µs): one each, a tie; 1000 of 2000 µs,
    # exactly half, hidden: effective.
    r = Rank(0)
    for ag1 in (NOT_HIDDEN, EFFECTIVE, (150, 1200, 1000)):
        r.step(ag1=ag1)
    out, rc = check_prefetch(b, [r])
    p = out["ranks"][0]
    c.eq("steady steps effective / not", (p["steady_steps_effective"], p["steady_steps_not_effective"]), (1, 1))
    c.eq("steady hidden share", p["steady_hidden_share"], 0.5)
    c.eq("run verdict", p["verdict"], "effective")
    c.eq("exit status", rc, 0)


def run_tie_under_half(b, c):
    # The same tie with step 2's all-gather 1 ns longer: 1000 of 2000.001 µs hidden, under half: not effective.
    r = Rank(0)
    for ag1 in (NOT_HIDDEN, EFFECTIVE):
        r.step(ag1=ag1)
    s = r.step()
    r.x(2, "all_gather", "comm", s + 1200 * US, 1000 * US + 1, {"unit": 1, "bytes": 4000, "group_size": 1, "issued_ns": s + 150 * US})
    out, rc = check_prefetch(b, [r])
    p = out["ranks"][0]
    c.eq("steady steps effective / not", (p["steady_steps_effective"], p["steady_steps_not_effective"]), (1, 1))
    c.eq("steady hidden share", p["steady_hidden_share"], (1000 * US) / (2000 * US + 1))
    c.eq("run verdict", p["verdict"], "not effective")
    c.eq("exit status", rc, 1)


def run_warm_up_left_out(b, c):
    # Step 0 effective, steps 1 and 2 not: step 0 does not count, 0 of 2: not effective.
    r = Rank(0)
    for ag1 in (EFFECTIVE, NOT_HIDDEN, NOT_HIDDEN):
        r.step(ag1=ag1)
    out, rc = check_prefetch(b, [r])
    p = out["ranks"][0]
    c.eq("step 0 verdict", p["steps"][0]["verdict"], "effective")
    c.eq("steady steps effective / not", (p["steady_steps_effective"], p["steady_steps_not_effective"]), (0, 2))
    c.eq("run verdict", p["verdict"], "not effective")


CASES = [issued_late, rate_limiter, rate_limiter_late, rate_limiter_off, behind_reduce_scatter, started_late, longer_than_compute, no_compute_under_it, late_peer, late_peer_under_half, started_late_with_a_late_peer,
         threshold_half, threshold_just_under_half,
         na_no_unit_compute, na_no_unit_all_gathers, na_fewer_than_two_units, na_no_backward_all_gather,
         run_majority, run_tie_at_half, run_tie_under_half, run_warm_up_left_out]


def main():
    binary = os.path.abspath(sys.argv[1])
    only = set(sys.argv[2:])
    failed = []
    for f in CASES:
        if only and f.__name__ not in only:
            continue
        c = Case(f.__name__)
        print(f"{f.__name__}:")
        try:
            f(binary, c)
        except (KeyError, IndexError, TypeError) as e:
            c.failed.append(f"{type(e).__name__}: {e}")
            print(f"  FAIL the output lacks what was expected: {type(e).__name__}: {e}")
        if c.failed:
            failed.append(f.__name__)
    if failed:
        print(f"{len(failed)} constructed case(s) failed: {', '.join(failed)}")
        sys.exit(1)
    print("every constructed case gave the verdict, cause and numbers worked out by hand")


if __name__ == "__main__":
    main()
