"""``arena worker`` that writes down, for each match it plays, when ``play_match`` began and ended and how
long the arena's own hooks inside it took (the live feed, the lease checks), one JSON line per match to
the file ``ARENA_BENCH_TIMINGS`` names: ``[pid, start, end, hooks_s, cpu_start, cpu_end, match_id, job_id]``
(``time.time()`` seconds; the worker thread's CPU time, ``time.thread_time()``, at the play's start and end;
the RQ job that played it).

Goal 4 of issue 19 is the worker's own time per match, not the playing: the time between one play's end
and the next one's start (RQ's dequeue and bookkeeping, the claim, the record, the refit request, and the
line written here) plus its hooks inside the play, all measured in the worker's own process while it
works. Measured so, it needs no second figure taken minutes apart to subtract from (``bench.throughput
overhead``'s in-process rate, which moved by 2x between runs on this machine)."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from rq import get_current_job

import arena.services.matches as matches
from arena.cli import main

PLAYED = matches.play_match


def _timed(hooks: list[float], hook: Callable[..., Any]) -> Callable[..., Any]:
    def run(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return hook(*args, **kwargs)
        finally:
            hooks[0] += time.perf_counter() - started

    return run


def timed_play(*args: Any, **kwargs: Any) -> Any:
    hooks = [0.0]
    for name in ("on_step", "on_public_step"):
        if kwargs.get(name) is not None:
            kwargs[name] = _timed(hooks, kwargs[name])
    match_id = int(str(kwargs.get("match_id", "m0a0"))[1:].split("a")[0])  # (the referee's "m<id>a<attempt>")
    start, cpu_start = time.time(), time.thread_time()
    try:
        return PLAYED(*args, **kwargs)
    finally:
        end, cpu_end = time.time(), time.thread_time()
        with open(os.environ["ARENA_BENCH_TIMINGS"], "a") as out:
            job = get_current_job()
            out.write(json.dumps([os.getpid(), start, end, hooks[0], cpu_start, cpu_end, match_id,
                                  job.id if job is not None else None]) + "\n")


def _profile_to(path: str) -> None:
    """``ARENA_BENCH_PROFILE``: a pyinstrument profile of the whole worker, written when it exits (what the
    gaps between plays are made of; the file gets the worker's pid appended)."""
    import atexit

    import pyinstrument

    profiler = pyinstrument.Profiler(interval=0.0005)
    profiler.start()

    def write() -> None:
        profiler.stop()
        with open(f"{path}.{os.getpid()}", "w") as out:
            every_frame = bool(os.environ.get("ARENA_BENCH_PROFILE_ALL"))  # the libraries' too
            out.write(profiler.output_text(unicode=False, color=False, show_all=every_frame))

    atexit.register(write)


if __name__ == "__main__":
    matches.play_match = timed_play  # type: ignore[assignment]
    if os.environ.get("ARENA_BENCH_PROFILE"):
        _profile_to(os.environ["ARENA_BENCH_PROFILE"])
    sys.exit(main(["worker"]))
