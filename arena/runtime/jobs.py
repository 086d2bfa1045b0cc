"""RQ job functions: importable, ids only, one service call each."""

from __future__ import annotations

import os
import socket
import time

from arena.composition import Context, build_context
from arena.runtime import heap
from arena.services import live_feed
from arena.services.leaderboards import refit
from arena.services.matches import ANNOUNCED, run_match

_context: Context | None = None  # one per worker process, built on the first job


def worker_context() -> Context:
    global _context
    if _context is None:
        _context = build_context(migrate=False)
    return _context


def set_worker_context(context: Context) -> None:
    """Used by ``arena worker`` to hand over the context it already built."""
    global _context
    _context = context


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def run_match_job(match_id: int) -> str:
    ctx = worker_context()
    request = ctx.queue.request_refit if ctx.queue is not None else None
    outcome = run_match(ctx.db, ctx.settings, int(match_id), worker_name(), request, live=ctx.live)
    if outcome not in ANNOUNCED:  # whatever happened: its pages look again
        live_feed.announce(ctx.db, ctx.live, int(match_id))
    if ctx.queue is not None and ctx.settings.ladder and outcome != "skipped":
        ctx.queue.wake_ladder()  # its bots are free: the ladder releases their next rotation at once
    if outcome != "skipped":
        heap.SETTLER.match_done()  # between matches: no bot is waiting on this process now
    return outcome


def refit_job(game: str, players: int) -> int:
    ctx = worker_context()
    if ctx.queue is not None:
        ctx.queue.refit_started(game, players)
    started = time.perf_counter()
    fitted = refit(ctx.db, game, int(players))
    if ctx.queue is not None:
        ctx.queue.refit_finished(game, int(players), time.perf_counter() - started)
    live_feed.refitted(ctx.live, game, int(players))
    return fitted
