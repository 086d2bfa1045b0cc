"""RQ job functions: importable, ids only, one service call each."""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime

from rq import get_current_job
from rq.job import Job

from arena.composition import Context, build_context
from arena.runtime import heap
from arena.services import live_feed
from arena.services.claims import ClaimAhead, hand_back, seat_urls
from arena.services.leaderboards import refit
from arena.services.matches import ANNOUNCED, run_match
from referee.connection_keeper import ConnectionKeeper

log = logging.getLogger("arena.jobs")
_context: Context | None = None  # one per worker process, built on the first job
STOPPING = threading.Event()  # set by the worker on a stop request: a batch plays no further match


def worker_context() -> Context:
    global _context
    if _context is None:
        _context = build_context(migrate=False)
    return _context


def set_worker_context(context: Context | None) -> None:
    """Used by ``arena worker`` to hand over the context it already built (None: none, for tests)."""
    global _context
    _context = context


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def run_match_job(match_id: int) -> str:
    ctx = worker_context()
    outcome = _play(ctx, int(match_id), ctx.queue.request_refit if ctx.queue is not None else None)
    if ctx.queue is not None and ctx.settings.ladder and outcome != "skipped":
        ctx.queue.wake_ladder()  # its bots are free: the ladder releases their next rotation at once
    return outcome


PLAYED_THROUGH = frozenset({"recorded", "duplicate"})  # outcomes of a match played to its end: it kept connections


def run_matches_job(match_ids: list[int]) -> list[str]:
    """A batch of a tournament's matches (``MatchQueue.enqueue_many``), one after the other, each claimed,
    played and recorded as a job of its own would, but for where each claim is made: the next match's in the
    transaction that records the one before it (``claims.ClaimAhead``), not in one of its own. Before each, the
    job's heartbeat tells the reconciler the batch is alive (``MatchQueue.live``), and a stop request ends the
    batch: its matches not started go back to the front of the queue (one claimed ahead handed back first).
    The refit requests of a board are sent at most once per ``refit_delay_s`` and once more at the end
    (``Refits``): a refit reads every match recorded before it."""
    ctx = worker_context()
    job = get_current_job()
    connections = ConnectionKeeper()  # idle connections to bots, handed from each match to the next
    refits = Refits(ctx.queue.request_refit, ctx.settings.refit_delay_s) if ctx.queue is not None else None
    beaten = float("-inf")
    outcomes: list[str] = []
    claimed: ClaimAhead | None = None  # this match, claimed by the record of the one before it
    ahead: ClaimAhead | None = None  # the next one, claimed by this match's record
    urls = _seat_urls(ctx, match_ids)
    try:
        for place, match_id in enumerate(match_ids):
            if STOPPING.is_set() and ctx.queue is not None:
                hand_back(ctx.db, claimed)  # (first: the queued job must find it claimable)
                for rest in reversed(match_ids[len(outcomes):]):  # each to the front: in their order
                    ctx.queue.enqueue(rest, at_front=True)
                break
            if job is not None and time.monotonic() - beaten > ctx.settings.match_lease_s / 4:
                beaten = time.monotonic()
                _beat(job, ctx.settings.match_lease_s)
            _limit_each_match(job, ctx.settings.job_timeout_s)
            following = int(match_ids[place + 1]) if place + 1 < len(match_ids) else None
            ahead = (ClaimAhead(following, ctx.settings.match_lease_s, urls.get(following, ()))
                     if following is not None else None)
            outcome = _play(ctx, int(match_id), refits.request if refits is not None else None, claimed, ahead,
                            connections)
            claimed = ahead
            if outcome not in PLAYED_THROUGH:
                connections.drop_idle()  # no match of this batch is playing their bots now
            if outcome == "lost" and ctx.queue is not None:  # released, and its batch plays on: a job of its own
                ctx.queue.enqueue(int(match_id), at_front=True)
            outcomes.append(outcome)
    finally:
        connections.close()
        for unplayed in (claimed, ahead):  # a claim made ahead and not played (the batch failed on the way): freed
            hand_back(ctx.db, unplayed)  # (nothing when it was played, or never made)
        if refits is not None:
            refits.flush()
    if ctx.queue is not None and ctx.settings.ladder and any(outcome != "skipped" for outcome in outcomes):
        ctx.queue.wake_ladder()
    return outcomes


def _seat_urls(ctx: Context, match_ids: list[int]) -> dict[int, tuple[str, ...]]:
    """Each match's seat URLs, for opening the next match's connections while the one before is recorded
    (``claims.seat_urls``). Only a saving: when they cannot be read, the batch plays without it."""
    try:
        return seat_urls(ctx.db, [int(match_id) for match_id in match_ids])
    except Exception:
        log.warning("could not read the batch's seat URLs; its matches open their connections at /start",
                    exc_info=True)
        return {}


def _beat(job: Job, lease_s: int) -> None:
    """The batch's heartbeat (``MatchQueue.live``), only while RQ still holds its record: a heartbeat is a
    field written into the record, and written into one that vanished it would leave a record without a job."""
    if job.connection.exists(job.key):
        job.heartbeat(datetime.now(UTC), lease_s)


def _limit_each_match(job: Job | None, limit_s: int) -> None:
    """``ARENA_JOB_TIMEOUT_S`` for each match of a batch, not for the batch (RQ's limit for it is that times
    its size): RQ's death penalty is the process's alarm signal, set again here as each match starts. Only
    under RQ's own handler for it: a process without one would be killed by the alarm."""
    if job is not None and signal.getsignal(signal.SIGALRM) not in (signal.SIG_DFL, signal.SIG_IGN, None):
        signal.alarm(max(1, int(limit_s)))


class Refits:
    """A batch's refit requests: a board's first goes out at once, later ones at most once per ``every_s``
    (the refit they ask for waits that long anyway), and what is held back goes out in ``flush``."""

    def __init__(self, send: Callable[[str, int], object], every_s: float) -> None:
        self.send, self.every_s = send, every_s
        self.sent: dict[tuple[str, int], float] = {}
        self.held: set[tuple[str, int]] = set()

    def request(self, game: str, players: int) -> None:
        board, now = (game, players), time.monotonic()
        if now - self.sent.get(board, float("-inf")) >= self.every_s:
            self.send(game, players)
            self.sent[board] = now
            self.held.discard(board)
        else:
            self.held.add(board)

    def flush(self) -> None:
        for game, players in sorted(self.held):
            self.send(game, players)
        self.held.clear()


def _play(ctx: Context, match_id: int, request_refit: Callable[[str, int], object] | None,
          claimed: ClaimAhead | None = None, ahead: ClaimAhead | None = None,
          connections: ConnectionKeeper | None = None) -> str:
    outcome = run_match(ctx.db, ctx.settings, match_id, worker_name(), request_refit, live=ctx.live,
                        claimed_before=claimed, ahead=ahead, connections=connections)
    if outcome not in ANNOUNCED:  # whatever happened: its pages look again
        live_feed.announce(ctx.db, ctx.live, match_id)
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
