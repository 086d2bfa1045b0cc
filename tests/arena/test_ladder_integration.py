"""The ladder end to end with real Redis, real worker processes and real bots, on SQLite and PostgreSQL: a
submitted bot is placed within seconds (woken, not polled), the scheduler killed -9 mid-run loses and
doubles nothing, and every ladder match is played or cancelled exactly once with its deal published."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import replace

import pytest
from sqlalchemy import func, select

from arena.composition import Context
from arena.runtime.queue import MatchQueue, connect
from arena.services import bots as bot_service
from arena.services import ladder_wake
from arena.services.accounts import create_account
from arena.services.ladders import pause_ladder
from arena.storage.models import Account, Ladder, LiveRating, Match, MatchSeat, MatchStatus
from sample_bots import random_bot
from sample_bots.sdk import start_in_thread
from tests.arena import service_harness as h

GAME = "piranha-pedro"
OPEN = (MatchStatus.SCHEDULED, MatchStatus.QUEUED, MatchStatus.RUNNING)


@pytest.fixture
def ladder_context(database, settings, redis_url) -> Context:
    settings = replace(settings, redis_url=redis_url, ladder=True, ladder_players="3", health_check=False,
                       ladder_tick_ms=300)
    context = Context(settings=settings, db=database, queue=MatchQueue(connect(redis_url), settings))
    ladder_wake.set_waker(context.queue.wake_ladder)
    yield context
    ladder_wake.set_waker(None)
    context.queue.close()


class Scheduler:
    """``arena ladder run`` as a process of its own, so the test can kill -9 it."""

    def __init__(self, context: Context, log_dir) -> None:
        self.env = {**h.worker_env(context), "ARENA_LADDER": "1", "ARENA_LADDER_PLAYERS": "3",
                    "ARENA_LADDER_TICK_MS": str(context.settings.ladder_tick_ms)}
        self.log_path = log_dir / "scheduler.log"
        self.procs: list[subprocess.Popen] = []

    def start(self) -> subprocess.Popen:
        with open(self.log_path, "ab") as log:
            proc = subprocess.Popen([sys.executable, "-m", "arena.cli", "ladder", "run"], cwd=h.ROOT, env=self.env,
                                    stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self.procs.append(proc)
        return proc

    def kill(self, proc: subprocess.Popen) -> None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.kill(proc)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-3000:] if self.log_path.exists() else ""


def _submit(context: Context, owner_id: int, name: str, seed: int, servers: list) -> int:
    server = start_in_thread(random_bot.make_bot(seed))
    servers.append(server)
    data, secret = bot_service.submit_bot(context.db, owner_id, name, server.url, GAME, context.settings)
    server.bot.secret = secret
    return data["id"]


def _first_start(context: Context, bot_id: int, timeout_s: float) -> float | None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with context.db.session(readonly=True) as session:
            started = session.scalar(select(func.count()).select_from(Match).join(MatchSeat)
                                     .where(MatchSeat.bot_id == bot_id, Match.started_at.is_not(None)))
        if started:
            return time.monotonic()
        time.sleep(0.02)
    return None


def _wait_settled_out(context: Context, timeout_s: float) -> dict[str, int]:
    """Until no ladder match is scheduled, queued or running; returns the count by status."""
    deadline = time.monotonic() + timeout_s
    counts: dict[str, int] = {}
    while time.monotonic() < deadline:
        with context.db.session(readonly=True) as session:
            counts = dict(session.execute(select(Match.status, func.count()).where(Match.ladder_id.is_not(None))
                                          .group_by(Match.status)).all())
        if not any(counts.get(s, 0) for s in OPEN):
            return counts
        time.sleep(0.2)
    raise AssertionError(f"ladder matches still open: {counts}")


def test_the_ladder_places_a_new_bot_within_seconds_and_a_killed_scheduler_doubles_nothing(
        ladder_context, tmp_path) -> None:
    context = ladder_context
    with context.db.session() as session:
        owners = [create_account(session, f"owner-{i}")[0].id for i in range(6)]  # one owner's bots never meet
        organizer, _ = create_account(session, "organizer", admin=True)
    servers: list = []
    workers = h.Workers(context, tmp_path)
    scheduler = Scheduler(context, tmp_path)
    try:
        workers.start(2)
        first = scheduler.start()
        ids = [_submit(context, owners[i], f"bot-{i}", i, servers) for i in range(5)]  # a table, two waiting
        assert _first_start(context, ids[0], 30), scheduler.log()
        submitted = time.monotonic()
        newcomer = _submit(context, owners[5], "newcomer", 99, servers)
        started = _first_start(context, newcomer, 20)
        assert started is not None, scheduler.log() + workers.logs()
        # placed at once, not after tables end (that took 10-34 s): the 2 s goal itself is measured by
        # `python -m bench.ladder e2e`, not here, where three test workers share two cores (2.01 s once)
        assert started - submitted < 6.0, f"first match {started - submitted:.2f} s after submission"
        time.sleep(1.0)
        scheduler.kill(first)  # kill -9 mid-run, whatever it was doing
        scheduler.start()
        time.sleep(3.0)  # the restarted one takes the lock once the dead one's lapses
        with context.db.session() as session:
            ladder_id = session.scalar(select(Ladder.id).where(Ladder.game == GAME, Ladder.players == 3))
            pause_ladder(session, session.get(Account, organizer.id), ladder_id, "the test is ending")
        counts = _wait_settled_out(context, 120)
    finally:
        scheduler.stop()
        workers.stop()
        for server in servers:
            server.shutdown()
            server.server_close()
    with context.db.session(readonly=True) as session:
        tables = session.execute(select(Match.table_index, func.count(), func.count(func.distinct(Match.rotation)))
                                 .where(Match.ladder_id == ladder_id).group_by(Match.table_index)).all()
        deals = session.execute(select(Match.seed, func.count()).where(Match.ladder_id == ladder_id)
                                .group_by(Match.seed)).all()
        finished = counts.get(MatchStatus.FINISHED, 0)
        live_games = session.scalar(select(func.coalesce(func.sum(LiveRating.games), 0))
                                    .where(LiveRating.game == GAME, LiveRating.players == 3))
        sealed = session.scalar(select(func.count()).select_from(Match).where(Match.status == MatchStatus.SEALED))
    assert tables and all(count == 3 and rotations == 3 for _table, count, rotations in tables)  # nothing doubled
    assert all(count == 1 for _seed, count in deals)  # every match a deal of its own
    assert finished >= 6, counts
    assert set(counts) <= {MatchStatus.FINISHED, MatchStatus.CANCELLED, MatchStatus.VOID}, counts
    assert live_games == 3 * finished  # every finished match rated exactly once
    assert sealed == 0  # every deal published
