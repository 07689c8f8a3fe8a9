#!/usr/bin/env python3
"""`import shardscope` against the CLI it wraps: the same JSON, the documented summary tables, the CLI's error
lines as exceptions, and torch.profiler's on_trace_ready on a real (CPU) profiler run.

    SHARDSCOPE_BIN=build/analyzer/shardscope PYTHONPATH=build/python test_shardscope.py SOURCE_DIR [Test...]
"""
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest
import warnings

import shardscope

SRC = sys.argv.pop(1)
BIN = os.environ["SHARDSCOPE_BIN"]
DDP_RUN = os.path.join(SRC, "tests/data/torch113_ddp_gloo")
PREFETCH_RUN = os.path.join(SRC, "tests/golden/trainer_cpu_2ranks/pre")


def cli(*args):
    return subprocess.run([BIN, *args], capture_output=True, text=True)


def quiet(f, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", shardscope.Warning)
        return f(*args, **kwargs)


def documented_columns():
    """docs/summaries.md's schema table: {table: [column, ...]}, the backticked names outside parentheses."""
    tables = {}
    for line in open(os.path.join(SRC, "docs/summaries.md"), encoding="utf-8"):
        m = re.match(r"\| `(\w+)` \|[^|]*\|(.*)\|\s*$", line)
        if m:
            cell = m.group(2)
            while re.search(r"\([^()]*\)", cell):
                cell = re.sub(r"\([^()]*\)", "", cell)
            tables[m.group(1)] = re.findall(r"`(\w+)`", cell)
    return tables


class Report(unittest.TestCase):
    def test_report_is_the_clis_json(self):
        got = quiet(shardscope.report, DDP_RUN)
        p = cli("report", "--format", "json", DDP_RUN)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(got, json.loads(p.stdout))
        self.assertEqual([r["rank"] for r in got["ranks"]], [0, 1])

    def test_options_are_the_clis_flags(self):
        got = quiet(shardscope.report, [DDP_RUN], world_size=8, sharding="zero3", dtype="bf16", step_marker="ProfilerStep#2")
        p = cli("report", "--format", "json", "--world-size", "8", "--sharding", "zero3", "--dtype", "bf16",
                "--step-marker", "ProfilerStep#2", DDP_RUN)
        self.assertEqual(got, json.loads(p.stdout))
        # The flags changed the report: not the default's.
        self.assertNotEqual(got, quiet(shardscope.report, DDP_RUN))

    def test_warnings_are_the_clis(self):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            shardscope.report(DDP_RUN)
        shown = [str(w.message) for w in caught if issubclass(w.category, shardscope.Warning)]
        said = [l[len("shardscope: warning: "):] for l in cli("report", "--format", "json", DDP_RUN).stderr.splitlines()
                if l.startswith("shardscope: warning: ")]
        self.assertEqual(shown, said)
        self.assertEqual(len(shown), 4)  # two a rank: no rank in the file, a bare array of events

    def test_check_prefetch_is_the_clis_json(self):
        got = quiet(shardscope.check_prefetch, PREFETCH_RUN, units=True)
        p = cli("check-prefetch", "--format", "json", PREFETCH_RUN)
        self.assertIn(p.returncode, (0, 1), p.stderr)
        self.assertEqual(got, json.loads(p.stdout))
        self.assertEqual(len(got["ranks"]), 2)


class Errors(unittest.TestCase):
    def test_an_unreadable_input_raises_the_clis_line(self):
        missing = os.path.join(tempfile.gettempdir(), "shardscope-no-such-run.json")
        with self.assertRaises(shardscope.Error) as e:
            shardscope.report([missing])
        p = cli("report", "--format", "json", missing)
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stderr.strip(), "shardscope: error: " + str(e.exception))
        self.assertIn(missing, str(e.exception))
        self.assertIsInstance(e.exception, ValueError)

    def test_nothing_to_check_raises_as_the_cli_exits_2(self):
        p = cli("check-prefetch", "--format", "json", DDP_RUN)
        self.assertEqual(p.returncode, 2)
        with self.assertRaises(shardscope.Error) as e:
            quiet(shardscope.check_prefetch, DDP_RUN)
        self.assertIn("nothing to check", str(e.exception))
        self.assertIn(str(e.exception), p.stderr)

    def test_a_bad_option_raises(self):
        with self.assertRaises(TypeError):
            shardscope.report(DDP_RUN, stepPattern="x")
        with self.assertRaisesRegex(ValueError, "zero4"):
            shardscope.report(DDP_RUN, sharding="zero4")
        with self.assertRaises(ValueError):
            shardscope.report(DDP_RUN, ranks="7-3,x")
        with self.assertRaises(ValueError):
            shardscope.report(DDP_RUN, step_pattern="a", step_marker="b")
        # A pattern RE2 refuses is the CLI's error, raised.
        with self.assertRaises(shardscope.Error) as e:
            quiet(shardscope.summaries, DDP_RUN, step_pattern="(")
        self.assertIn(str(e.exception), cli("summarize", "--step-pattern", "(", DDP_RUN, "-o",
                                            tempfile.mkdtemp()).stderr)


class Summaries(unittest.TestCase):
    def test_tables_have_the_documented_columns_and_the_reports_rows(self):
        tables = quiet(shardscope.summaries, DDP_RUN)
        documented = documented_columns()
        self.assertEqual(sorted(tables), sorted(shardscope.SUMMARY_TABLES))
        for name, df in tables.items():
            self.assertEqual(list(df.columns), ["rank"] + documented[name], name)
        report = quiet(shardscope.report, DDP_RUN)
        for r in report["ranks"]:
            rank = r["rank"]
            of = {name: df[df["rank"] == rank] for name, df in tables.items()}
            self.assertEqual(len(of["steps"]), len(r["steps"]))
            self.assertEqual(list(of["steps"]["step"]), [s["step"] for s in r["steps"]])
            self.assertEqual(len(of["collective_stats"]), len(r["collectives"]))
            self.assertEqual(len(of["collectives"]), sum(c["count"] for c in r["collectives"]))
            self.assertEqual(len(of["warnings"]), 2)
        self.assertEqual(len(tables["steps"]), 8)  # 2 ranks x make_trace.py's STEPS = 4


def have_torch():
    try:
        import torch  # noqa: F401

        return True
    except ImportError:
        return False


@unittest.skipUnless(have_torch(), "no torch for this Python (Debian: python3-torch)")
class TorchProfiler(unittest.TestCase):
    def test_trace_handler_writes_a_trace_the_module_reads(self):
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP

        import shardscope.torch

        with tempfile.TemporaryDirectory() as tmp:
            # One rank of a Gloo group: DDP's all-reduces are the communication the steps are judged by.
            dist.init_process_group("gloo", init_method="file://" + os.path.join(tmp, "store"), rank=0, world_size=1)
            torch.manual_seed(0)
            model = DDP(torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1)))
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            handler = shardscope.torch.trace_handler(os.path.join(tmp, "traces"), gzip=True)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", shardscope.Warning)
                with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                            schedule=torch.profiler.schedule(wait=0, warmup=1, active=3),
                                            on_trace_ready=handler) as prof:
                    for _ in range(4):
                        opt.zero_grad()
                        model(torch.randn(4, 8)).sum().backward()
                        opt.step()
                        prof.step()
            dist.destroy_process_group()
            self.assertEqual(handler.path, os.path.join(tmp, "traces", "rank0.json.gz"))
            with gzip.open(handler.path, "rt") as f:
                events = json.load(f)
            events = events["traceEvents"] if isinstance(events, dict) else events
            profiled = sorted(int(e["name"].split("#")[1]) for e in events if e.get("name", "").startswith("ProfilerStep#"))
            self.assertEqual(len(profiled), 3)  # the schedule's active steps
            steps = handler.summary["steps"]
            self.assertEqual(list(steps["rank"]), [0, 0, 0])
            self.assertEqual(len(steps), len(profiled))
            self.assertTrue((steps["comm_ns"] > 0).all())  # every step's all-reduce
            p = cli("report", "--format", "json", handler.path)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(quiet(shardscope.report, handler.path), json.loads(p.stdout))


if __name__ == "__main__":
    unittest.main()
