"""Playing and recording one stored match (arena.services.matches), in process."""

from __future__ import annotations

from sqlalchemy import select, update

from arena.services.matches import claim, run_match
from arena.storage.models import Match, MatchStatus
from arena.storage.replays import decompress
from sample_bots.random_bot import make_bot
from sample_bots.sdk import start_in_thread
from tests.arena import service_harness as h


def _one_match(context, servers) -> int:
    bots = h.register_bots(context, servers, "piranha-pedro")
    h.start_tournament(context, {"game": "piranha-pedro", "bots": bots, "seats": 2, "seed": 1})
    with context.db.session() as session:
        return session.scalar(select(Match.id).order_by(Match.id).limit(1))


def test_replayed_match_regression_signing_bots_refused_the_second_attempt_as_stale(context) -> None:
    """Bug: a match played again after its worker died reused the bots' match id, so bots that check
    turns (the SDK with a secret does) refused every replayed turn as stale (HTTP 409), 12 faults in the
    chaos test. Every attempt is now a new match id to the bots."""
    servers = [start_in_thread(make_bot(i)) for i in range(2)]
    try:
        match_id = _one_match(context, servers)
        assert run_match(context.db, context.settings, match_id, "w1") == "recorded"
        with context.db.session() as session:  # as if that worker had died before recording
            session.execute(update(Match).where(Match.id == match_id).values(status=MatchStatus.QUEUED))
        assert run_match(context.db, context.settings, match_id, "w2") == "recorded"
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
    with context.db.session(readonly=True) as session:
        match = session.get(Match, match_id)
        replay = decompress(match.replay_gz)
    assert match.attempts == 2 and replay["match_id"] == f"m{match_id}a2"
    assert replay["faults"] == []


def test_a_match_is_claimed_by_one_worker_only(context) -> None:
    with h.slow_bots(2, 0) as servers:
        match_id = _one_match(context, servers)
        with context.db.session() as session:
            assert claim(session, match_id, "w1", lease_s=30)
        with context.db.session() as session:
            assert not claim(session, match_id, "w2", lease_s=30)  # the lease holds
        assert run_match(context.db, context.settings, match_id, "w3") == "skipped"


def test_an_expired_lease_lets_another_worker_take_the_match(context) -> None:
    with h.slow_bots(2, 0) as servers:
        match_id = _one_match(context, servers)
        with context.db.session() as session:
            assert claim(session, match_id, "dead-worker", lease_s=-1)  # already expired
        assert run_match(context.db, context.settings, match_id, "w2") == "recorded"
        assert run_match(context.db, context.settings, match_id, "w3") == "skipped"
