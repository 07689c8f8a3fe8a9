"""torch.profiler's on_trace_ready for shardscope: the rank's trace written where shardscope reads it, and
its summary (shardscope.summaries) kept on the handler.

    prof = torch.profiler.profile(schedule=..., on_trace_ready=shardscope.torch.trace_handler("traces"))

Each time the profiler hands over a trace, the handler writes it with the profiler's own
export_chrome_trace as DIR/rank<R>.json (rank<R>.json.gz with gzip=True; R: torch.distributed's rank, else
$RANK, else 0), then summarises it: handler.path is the file, handler.summary its tables (a dict of
DataFrames), which the call returns too.
"""

import os

from . import summaries


def _rank():
    try:
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized():
            return dist.get_rank()
    except ImportError:
        pass
    return int(os.environ.get("RANK", "0"))


def trace_handler(dir, gzip=False, rank=None, **options):  # noqa: A002 (the profiler's own name for it)
    """A callable for torch.profiler.profile(on_trace_ready=...); options are summaries()'s."""

    def handler(prof):
        os.makedirs(dir, exist_ok=True)
        r = _rank() if rank is None else rank
        path = os.path.join(dir, f"rank{r}.json" + (".gz" if gzip else ""))
        prof.export_chrome_trace(path)
        handler.path = path
        handler.summary = summaries([path], **options)
        return handler.summary

    handler.path = None
    handler.summary = None
    return handler
