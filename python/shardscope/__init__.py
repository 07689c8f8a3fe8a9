"""shardscope from Python: the CLI's report, check-prefetch and summaries, in process (docs/python.md).

Each function calls the command the CLI runs (analyzer/cli/) and returns what it writes: ``report`` the
dict that ``shardscope report --format json`` prints, ``check_prefetch`` that of ``shardscope check-prefetch
--format json``, ``summaries`` the tables of ``shardscope summarize``'s rank summaries as pandas DataFrames.
An error the CLI gives as ``shardscope: error: MESSAGE`` raises ``shardscope.Error(MESSAGE)`` (a
ValueError); its warnings are Python warnings (``shardscope.Warning``).
"""

import json
import os
import sqlite3
import tempfile
import warnings as _warnings

from . import _shardscope

# Not Warning: `from shardscope import *` would hide the builtin.
__all__ = ["Error", "report", "check_prefetch", "summaries", "SUMMARY_TABLES"]


class Error(ValueError):
    """An error the CLI would print as one ``shardscope: error: ...`` line; str() is that line's message."""


class Warning(UserWarning):  # noqa: A001 (shardscope.Warning, as the CLI's "shardscope: warning:")
    """A warning the CLI would print as ``shardscope: warning: ...``."""


# The summary file's row tables (analyzer/analysis/summary_tables.cc, summary_file.cc; docs/summaries.md),
# each a DataFrame of summaries(): its columns follow a `rank` column.
SUMMARY_TABLES = ("steps", "collectives", "collective_stats", "prefetch_units", "memory", "device_time", "warnings")

# The options every reading command takes, as the CLI's flags: --step-pattern, --step-marker, --allow-mixed,
# --max-trace-bytes.
_READING = {"step_pattern": "", "step_marker": "", "allow_mixed": False, "max_trace_bytes": 0}
_REPORT = {"ranks": "worst", "steps": "", "params": None, "world_size": None, "sharding": None, "dtype": None,
           "optimizer": None}
_CHECK = {"ranks": "worst", "steps": "", "units": False}


def _paths(paths):
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    paths = [os.fsdecode(p) for p in paths]
    if not paths:
        raise Error("PATH is required: name trace files, rank summaries or directories of them")
    return paths


def _options(given, known, command):
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise TypeError(f"{command}() got unknown option{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
                        f"(it takes {', '.join(sorted(known))})")
    return {**known, **given}


def _outcome(rc, out, err, ok=(0,)):
    """The command's stdout, its warnings issued and its error raised (the CLI's exit code 2)."""
    message = None
    for line in err.splitlines():
        if line.startswith("shardscope: warning: "):
            _warnings.warn(line[len("shardscope: warning: "):], Warning, stacklevel=3)
        elif line.startswith("shardscope: error: "):
            message = message or line[len("shardscope: error: "):]
        elif line.startswith("shardscope: ") and message is None:
            message = line[len("shardscope: "):]
    if rc not in ok:
        raise Error(message or f"the command exited {rc}")
    return out


def report(paths, **options):
    """The JSON report of `shardscope report --format json PATHS` as a dict.

    Options: step_pattern, step_marker, allow_mixed, max_trace_bytes (the reading flags); params,
    world_size, sharding, dtype, optimizer (the memory model's inputs); ranks, steps (checked as the CLI
    checks them; the JSON holds every rank and step).
    """
    o = _options(options, {**_READING, **_REPORT}, "report")
    return json.loads(_outcome(*_shardscope.report(_paths(paths), "json", **o)))


def check_prefetch(paths, **options):
    """`shardscope check-prefetch --format json PATHS` as a dict: its "verdict" and each rank's steps.

    A run whose prefetch is not effective is a result (verdict "NOT_EFFECTIVE"), not an error; a run with
    nothing to check raises Error, as the CLI exits 2. Options: the reading ones, and ranks, steps, units.
    """
    o = _options(options, {**_READING, **_CHECK}, "check_prefetch")
    return json.loads(_outcome(*_shardscope.check_prefetch(_paths(paths), "json", **o), ok=(0, 1)))


def summaries(paths, **options):
    """Each summary table of the run's rank summaries (`shardscope summarize`) as a pandas DataFrame.

    Returns {table: DataFrame} for each of SUMMARY_TABLES: the table's columns (docs/summaries.md) after a
    `rank` column, every rank's rows in rank order. Options: the reading ones.
    """
    import pandas

    o = _options(options, _READING, "summaries")
    with tempfile.TemporaryDirectory(prefix="shardscope-") as tmp:
        _outcome(*_shardscope.summarize(_paths(paths), tmp, **o))
        frames = {t: [] for t in SUMMARY_TABLES}
        files = sorted(f for f in os.listdir(tmp) if f.endswith(".sqlite"))
        ranked = []
        for name in files:
            db = sqlite3.connect(f"file:{os.path.join(tmp, name)}?mode=ro", uri=True)
            try:
                rank = int(db.execute("SELECT value FROM meta WHERE key = 'rank'").fetchone()[0])
                tables = {t: pandas.read_sql_query(f"SELECT * FROM {t}", db) for t in SUMMARY_TABLES}
            finally:
                db.close()
            ranked.append((rank, name, tables))
        for rank, _, tables in sorted(ranked, key=lambda r: (r[0], r[1])):
            for t, df in tables.items():
                df.insert(0, "rank", rank)
                frames[t].append(df)
        return {t: (pandas.concat(dfs, ignore_index=True) if dfs else pandas.DataFrame(columns=["rank"]))
                for t, dfs in frames.items()}
