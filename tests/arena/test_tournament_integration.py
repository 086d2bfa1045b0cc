"""Tournaments end to end: real Redis, real worker processes, real bots on loopback.

Every match must finish exactly once and nothing may be counted twice, also when a worker is killed
with SIGKILL in the middle of a match and when Redis restarts mid-tournament (losing its queue).
"""

from __future__ import annotations

import json
import os
import signal
from collections import Counter
from dataclasses import replace

import pytest
from sqlalchemy import func, select

from arena.composition import Context
from arena.runtime.queue import MatchQueue, connect
from arena.storage.models import Fault, LiveRating, Match, MatchSeat, MatchStatus, Rating, Tournament
from arena.storage.replays import decompress
from referee.replay import verify_replay
from tests.arena import service_harness as h

pytestmark = pytest.mark.integration


def _check_exactly_once(context: Context, tournament_id: int, bots: list[int], seats: int) -> None:
    with context.db.session() as session:
        matches = list(session.scalars(select(Match).where(Match.tournament_id == tournament_id)))
        assert matches and all(m.status == MatchStatus.FINISHED for m in matches)
        assert all(m.replay_gz and m.result for m in matches)
        tournament = session.get(Tournament, tournament_id)
        assert tournament.status == "finished" and tournament.total == len(matches)
        # every seat row has a rank; every bot's live rating counted each of its matches once
        seat_rows = list(session.scalars(select(MatchSeat).join(Match).where(Match.tournament_id == tournament_id)))
        assert all(row.rank is not None for row in seat_rows)
        played = Counter(row.bot_id for row in seat_rows)
        live = dict(session.execute(select(LiveRating.bot_id, LiveRating.games)
                                    .where(LiveRating.players == seats)).all())
        assert live == dict(played)
        rated = dict(session.execute(select(Rating.bot_id, Rating.games).where(Rating.players == seats)).all())
        assert rated == dict(played)
        assert set(played) == set(bots)
        # faults are recorded once per replayed fault, never twice
        for match in matches[:10]:
            replay = decompress(match.replay_gz)
            recorded = session.scalar(select(func.count()).select_from(Fault).where(Fault.match_id == match.id))
            assert recorded == len(replay["faults"])
            assert verify_replay(json.loads(json.dumps(replay))).ok


@pytest.fixture
def workers(queued_context, tmp_path):
    pool = h.Workers(queued_context, tmp_path)
    yield pool
    pool.stop()


def test_a_six_bot_tournament_runs_to_completion(queued_context, workers) -> None:
    with h.slow_bots(6, 0.002) as servers:
        bots = h.register_bots(queued_context, servers, "piranha-pedro")
        workers.start(3)
        tournament_id = h.start_tournament(queued_context, {"game": "piranha-pedro", "bots": bots, "seats": 3,
                                                            "seed": 11})
        progress = h.wait_for(queued_context, tournament_id, 180, workers)
    assert progress["total"] == 20 * 3  # all 3-subsets of 6 bots, every bot in every seat of its tables
    _check_exactly_once(queued_context, tournament_id, bots, 3)


def test_workers_killed_mid_match_lose_nothing_and_count_nothing_twice(queued_context, workers) -> None:
    with h.slow_bots(6, 0.03) as servers:
        bots = h.register_bots(queued_context, servers, "pajarracos")
        workers.start(3)
        tournament_id = h.start_tournament(queued_context, {"game": "pajarracos", "bots": bots, "seats": 3,
                                                            "seed": 5})
        killed_matches: list[int] = []
        dead: set[str] = set()
        for _ in range(2):
            match_id, worker = h.running_match(queued_context, exclude=frozenset(dead))
            dead.add(worker)
            pid = int(worker.rsplit(":", 1)[1])
            victim = next(p for p in workers.procs if p.pid == pid)
            workers.kill(victim)
            killed_matches.append(match_id)
            workers.start(1)
        h.wait_for(queued_context, tournament_id, 300, workers)
    with queued_context.db.session() as session:
        attempts = dict(session.execute(select(Match.id, Match.attempts).where(Match.id.in_(killed_matches))).all())
    assert all(a >= 2 for a in attempts.values()), attempts
    _check_exactly_once(queued_context, tournament_id, bots, 3)


def _played(context: Context) -> int:
    """Matches recorded, sealed (a twin of their deal still open) or published."""
    with context.db.session() as session:
        return session.scalar(select(func.count()).select_from(Match).where(
            Match.status.in_([MatchStatus.SEALED, MatchStatus.FINISHED])))


def test_a_worker_stopped_mid_batch_hands_back_the_matches_it_had_not_begun(queued_context, workers) -> None:
    """SIGTERM (``arena up`` stopping, systemd, docker) lets a worker finish its match and exit; the rest of
    its batch goes back to the queue at once, not to a batch RQ calls started until a lease has passed."""
    with h.slow_bots(4, 0.02) as servers:
        bots = h.register_bots(queued_context, servers, "piranha-pedro")
        workers.start(1)
        tournament_id = h.start_tournament(queued_context, {"game": "piranha-pedro", "bots": bots, "seats": 2,
                                                            "cycles": 4, "seed": 9})
        assert len(queued_context.queue.queue) < 48  # in batches
        h.running_match(queued_context)
        proc = workers.procs[0]
        before = _played(queued_context)
        os.killpg(proc.pid, signal.SIGTERM)
        assert proc.wait(timeout=15) == 0, workers.logs()
        assert _played(queued_context) - before <= 2  # the match in flight (and one ending as it came)
        with queued_context.db.session() as session:
            owed = list(session.scalars(select(Match.id).where(Match.tournament_id == tournament_id,
                                                               Match.status == MatchStatus.QUEUED)))
            running = session.scalar(select(func.count()).select_from(Match).where(
                Match.tournament_id == tournament_id, Match.status == MatchStatus.RUNNING))
        assert owed and running == 0
        assert queued_context.queue.live(owed) == set(owed)  # each in a job that will run
        workers.start(1)
        h.wait_for(queued_context, tournament_id, 180, workers)
    _check_exactly_once(queued_context, tournament_id, bots, 2)


def test_a_redis_restart_mid_tournament_loses_no_match(context, workers, tmp_path) -> None:
    redis = h.RedisServer(tmp_path)
    redis.start()
    queue = None
    try:
        settings = replace(context.settings, redis_url=redis.url)
        queue = MatchQueue(connect(redis.url), settings)
        ctx = Context(settings=settings, db=context.db, queue=queue)
        workers.context = ctx
        with h.slow_bots(6, 0.01) as servers:
            bots = h.register_bots(ctx, servers, "piranha-pedro-ko")
            workers.start(2)
            tournament_id = h.start_tournament(ctx, {"game": "piranha-pedro-ko", "bots": bots, "seats": 2,
                                                     "seed": 3})
            h.running_match(ctx)
            before = h.finished_count(ctx)
            redis.stop()  # the queue and every job in it are gone
            redis.start()
            h.wait_for(ctx, tournament_id, 300, workers)
        assert before < 30
        _check_exactly_once(ctx, tournament_id, bots, 2)
    finally:
        if queue is not None:
            queue.close()
        redis.stop()
