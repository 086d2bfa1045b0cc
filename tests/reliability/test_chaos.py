"""Crash and restart: a 200-match tournament while workers are SIGKILLed at random moments, Redis is
restarted (losing its queue) and the web app is restarted. Afterwards every match finished exactly
once, nothing was counted twice, and the stored ratings equal a fresh recomputation from the match log."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

import pytest
import requests
from sqlalchemy import func, select

from arena.composition import Context
from arena.ratings.leaderboard import leaderboard as fit_leaderboard
from arena.runtime.queue import MatchQueue, connect
from arena.services.leaderboards import BOOTSTRAP_SEED, match_log
from arena.storage.models import Fault, LiveRating, Match, MatchSeat, MatchStatus, Rating
from tests.arena import service_harness as h

pytestmark = [pytest.mark.integration, pytest.mark.slow]
GAME, SEATS = "piranha-pedro", 2


class WebApp:
    """The web app under gunicorn, restartable."""

    def __init__(self, context: Context, log_dir) -> None:
        self.env = {**h.worker_env(context), "ARENA_BIND": f"127.0.0.1:{h.free_port()}", "WEB_CONCURRENCY": "2"}
        self.url = "http://" + self.env["ARENA_BIND"]
        self.log_dir = log_dir
        self.proc: subprocess.Popen | None = None
        self.starts = 0

    def start(self) -> None:
        self.starts += 1
        with open(self.log_dir / f"web-{self.starts}.log", "wb") as log:
            self.proc = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py",
                                          "arena.web.wsgi:app"], cwd=h.ROOT, env=self.env, stdout=log,
                                         stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if requests.get(self.url + "/healthz", timeout=2).status_code == 200:
                    return
            except requests.RequestException:
                time.sleep(0.2)
        raise AssertionError("the web app did not come up")

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, sig)
            self.proc.wait(timeout=30)


def _progress(web: WebApp, tournament_id: int) -> dict | None:
    try:
        return requests.get(f"{web.url}/api/tournaments/{tournament_id}", timeout=5).json()["progress"]
    except (requests.RequestException, ValueError, KeyError):
        return None  # the web app may be restarting


def test_chaos_tournament_of_200_matches(tmp_path) -> None:
    from tests.arena.conftest import postgres_database

    redis = h.RedisServer(tmp_path)
    redis.start()
    with postgres_database() as db:
        from arena.config import load_settings

        settings = load_settings({}, env="test", data_dir=tmp_path, secret_key="chaos", rate_limits=False,
                                 match_lease_s=3, reconcile_interval_s=1, decision_ms=2000, redis_url=redis.url)
        context = Context(settings=settings, db=db, queue=MatchQueue(connect(redis.url), settings))
        workers = h.Workers(context, tmp_path)
        web = WebApp(context, tmp_path)
        rng = random.Random(2026)
        try:
            with h.slow_bots(5, 0.01) as servers:
                bots = h.register_bots(context, servers, GAME)
                web.start()
                workers.start(3)
                tournament_id = h.start_tournament(context, {"game": GAME, "bots": bots, "seats": SEATS,
                                                             "cycles": 10, "seed": 77})
                events = _run_with_chaos(context, web, workers, redis, tournament_id, rng)
            assert events["worker_kills"] >= 4 and events["redis_restarts"] == 1 and events["web_restarts"] == 1
        finally:
            web.stop()
            workers.stop()
            context.queue.close()
            redis.stop()
        _check(context, tournament_id, bots)


def _run_with_chaos(context: Context, web: WebApp, workers: h.Workers, redis: h.RedisServer, tournament_id: int,
                    rng: random.Random) -> dict[str, int]:
    events = {"worker_kills": 0, "redis_restarts": 0, "web_restarts": 0}
    deadline = time.monotonic() + 900
    next_kill = time.monotonic() + rng.uniform(1, 3)
    # a kill is also due at each of these counts of finished matches: on a quick machine the whole tournament
    # took 20 s, and kills 1-4 s apart came fewer than four times
    kill_at = sorted(rng.sample(range(10, 190), 6))
    while time.monotonic() < deadline:
        progress = _progress(web, tournament_id)
        done = progress["done"] if progress else None
        if progress and done == progress["total"]:
            h.wait_for(context, tournament_id, 120, workers)  # and the queued refits have run
            return events
        now = time.monotonic()
        due = now >= next_kill or (done is not None and kill_at and done >= kill_at[0])
        if due and events["worker_kills"] < 6:
            while kill_at and done is not None and done >= kill_at[0]:
                kill_at.pop(0)
            workers.kill(_victim(context, workers, rng))
            workers.start(1)
            events["worker_kills"] += 1
            next_kill = now + rng.uniform(1, 4)
        if done is not None and done >= 80 and not events["redis_restarts"]:
            redis.stop()
            time.sleep(rng.uniform(0.2, 1.0))
            redis.start()
            events["redis_restarts"] += 1
        if done is not None and done >= 120 and not events["web_restarts"]:
            web.stop(signal.SIGKILL)
            web.start()
            events["web_restarts"] += 1
        time.sleep(0.3)
    raise AssertionError(f"the tournament did not finish: {_progress(web, tournament_id)}\n{workers.logs()}")


def _victim(context: Context, workers: h.Workers, rng: random.Random) -> subprocess.Popen:
    """A worker in the middle of a match when there is one (that is the interesting moment)."""
    alive = {p.pid: p for p in workers.procs if p.poll() is None}
    with context.db.session(readonly=True) as session:
        busy = [name for name in session.scalars(select(Match.worker).where(Match.status == MatchStatus.RUNNING))
                if name and int(name.rsplit(":", 1)[1]) in alive]
    if busy:
        return alive[int(rng.choice(sorted(busy)).rsplit(":", 1)[1])]
    return alive[rng.choice(sorted(alive))]


def _check(context: Context, tournament_id: int, bots: list[int]) -> None:
    with context.db.session(readonly=True) as session:
        statuses = dict(session.execute(select(Match.status, func.count())
                                        .where(Match.tournament_id == tournament_id).group_by(Match.status)).all())
        assert statuses == {MatchStatus.FINISHED: 200}
        retried = session.scalar(select(func.count()).select_from(Match).where(Match.attempts > 1))
        assert retried >= 1  # some match really was cut short and played again
        played = dict(session.execute(select(MatchSeat.bot_id, func.count()).group_by(MatchSeat.bot_id)).all())
        assert played == {bot: 80 for bot in bots}
        live = dict(session.execute(select(LiveRating.bot_id, LiveRating.games)).all())
        assert live == played  # the live Elo counted every match once
        faults = session.execute(select(Fault.kind, Fault.path, Fault.message)).all()
        assert faults == []
        stored = {r.bot_id: r for r in session.scalars(select(Rating).where(Rating.game == GAME,
                                                                            Rating.players == SEATS))}
        log, _last = match_log(session, GAME, SEATS)
    assert len(log) == 200
    fresh = fit_leaderboard(log, rng=random.Random(BOOTSTRAP_SEED))
    assert {row.bot for row in fresh} == set(stored)
    for row in fresh:
        mine = stored[row.bot]
        assert mine.games == row.games == 80
        assert (mine.rank, mine.rank_low, mine.rank_high) == (row.rank, row.rank_low, row.rank_high)
        assert abs(mine.elo - row.elo) < 1e-6 and abs(mine.elo_low - row.elo_low) < 1e-6
        assert abs(mine.elo_high - row.elo_high) < 1e-6
