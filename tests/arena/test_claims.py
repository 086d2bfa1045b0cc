"""Claims made ahead (arena.services.claims): a worker's batch claims each next match in the transaction that
records the one before it, with real bots, a real Redis and both databases; what a stop request, a failed batch
and a row locked elsewhere leave."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import select, text

import arena.services.matches as matches_service
from arena.runtime import jobs
from arena.runtime.queue import job_id
from arena.services.claims import ClaimAhead, claim, hand_back
from arena.services.matches import store
from arena.storage.models import Match, MatchStatus
from tests.arena import service_harness as h

GAME = "piranha-pedro"


def _matches(context, servers, cycles: int = 2) -> list[int]:
    """A 2-seat tournament of the two bots, queued: ``cycles`` x 2 matches."""
    bots = h.register_bots(context, servers, GAME)
    for server, bot_id in zip(servers, bots, strict=True):
        server.bot_id = bot_id
    tournament_id = h.start_tournament(context, {"game": GAME, "bots": bots, "seats": 2, "cycles": cycles})
    with context.db.session() as session:
        return list(session.scalars(select(Match.id).where(Match.tournament_id == tournament_id).order_by(Match.id)))


def _rows(context, ids: list[int]) -> list[tuple[str, int]]:
    with context.db.session(readonly=True) as session:
        return [(str(status), attempts) for status, attempts in session.execute(
            select(Match.status, Match.attempts).where(Match.id.in_(ids)).order_by(Match.id))]


@pytest.fixture
def worker(queued_context, monkeypatch):  # type: ignore[no-untyped-def]
    """``run_matches_job`` with the worker's context, counting the claims made on their own (in autocommit)."""
    own = []
    autocommit = queued_context.db.autocommit

    def counted():  # type: ignore[no-untyped-def]
        own.append(1)
        return autocommit()

    monkeypatch.setattr(queued_context.db, "autocommit", counted)
    jobs.set_worker_context(queued_context)
    yield own
    jobs.set_worker_context(None)
    jobs.STOPPING.clear()


def test_a_batch_claims_each_next_match_in_the_record_of_the_one_before(queued_context, worker) -> None:
    with h.slow_bots(2, 0) as servers:
        ids = _matches(queued_context, servers)
        assert jobs.run_matches_job(ids) == ["recorded"] * len(ids)
    assert len(worker) == 1  # the first match's claim alone stood on its own
    assert _rows(queued_context, ids) == [(MatchStatus.FINISHED, 1)] * len(ids)


def test_a_stop_request_hands_back_the_match_claimed_ahead_before_queueing_it_again(queued_context, worker,
                                                                                     monkeypatch) -> None:
    """The stop comes while the first match is recorded, whose record claimed the second: the second is queued
    again as it was (its attempt not counted), before the batch puts it at the front of the queue, so that the
    job that takes it can claim it at once (a claim left held would wait out its lease)."""
    stored = matches_service.store

    def store_then_stop(*args, **kwargs):  # type: ignore[no-untyped-def]
        try:
            return stored(*args, **kwargs)
        finally:
            jobs.STOPPING.set()

    monkeypatch.setattr(matches_service, "store", store_then_stop)
    queue = queued_context.queue
    enqueue, found = queue.enqueue, {}

    def enqueue_noting(match_id: int, **kwargs):  # type: ignore[no-untyped-def]
        found[match_id] = _rows(queued_context, [match_id])[0]  # what a worker taking the job at once would find
        return enqueue(match_id, **kwargs)

    monkeypatch.setattr(queue, "enqueue", enqueue_noting)
    with h.slow_bots(2, 0) as servers:
        ids = _matches(queued_context, servers)[:3]
        assert jobs.run_matches_job(ids) == ["recorded"]
    assert found == {ids[1]: (MatchStatus.QUEUED, 0), ids[2]: (MatchStatus.QUEUED, 0)}
    assert _rows(queued_context, ids) == [(MatchStatus.SEALED, 1), (MatchStatus.QUEUED, 0), (MatchStatus.QUEUED, 0)]
    assert queue.queue.job_ids[:2] == [job_id(ids[1]), job_id(ids[2])]
    with queued_context.db.autocommit() as connection:
        assert claim(connection, ids[1], "another", 30).attempts == 1  # claimable at once


def test_a_batch_that_fails_after_a_claim_ahead_hands_it_back(queued_context, worker, monkeypatch) -> None:
    """A batch that ends with an error between a record and the next match (here: setting the next match's time
    limit) leaves no claim made ahead behind: the match is queued again as it was, not leased for a lease."""
    limits = []

    def limit(_job, _limit_s):  # type: ignore[no-untyped-def]
        limits.append(1)
        if len(limits) > 1:
            raise RuntimeError("the second match's time limit could not be set")

    monkeypatch.setattr(jobs, "_limit_each_match", limit)
    with h.slow_bots(2, 0) as servers:
        ids = _matches(queued_context, servers)[:2]
        with pytest.raises(RuntimeError):
            jobs.run_matches_job(ids)
    assert _rows(queued_context, ids) == [(MatchStatus.SEALED, 1), (MatchStatus.QUEUED, 0)]


def test_a_claim_ahead_skips_a_row_locked_elsewhere_instead_of_waiting(context) -> None:
    """Ahead, a record holds its match's row and its board's lock; a transaction holding the next match's row
    may be waiting for that lock (another worker recording it), so the claim must not wait for it: a deadlock.
    On PostgreSQL the locked row is skipped and the record commits; SQLite writes one transaction at a time."""
    if context.db.engine.dialect.name != "postgresql":
        pytest.skip("SQLite has no row locks: one writer at a time")
    with h.slow_bots(2, 0) as servers:
        first, second = _matches(context, servers, cycles=1)
        replay = h.play_alone(context, servers, first)
    with context.db.autocommit() as connection:
        assert claim(connection, first, "w", 60) is not None
    ahead = ClaimAhead(second, 60)
    with context.db.engine.connect() as holder:
        holder.execute(text("SELECT id FROM matches WHERE id = :m FOR UPDATE"), {"m": second})
        done = threading.Event()
        thread = threading.Thread(target=lambda: (store(context.db, first, replay, claim=("w", 1), ahead=ahead),
                                                  done.set()))
        thread.start()
        finished = done.wait(10)
        holder.rollback()
    thread.join(10)
    assert finished  # it did not wait for the lock
    assert ahead.row is None and _rows(context, [first, second]) == [(MatchStatus.SEALED, 1), (MatchStatus.QUEUED, 0)]


def test_a_claim_ahead_is_made_only_with_the_record_that_commits(context) -> None:
    """A record that does not go through (its claim was lost: another worker holds the match) claims nothing
    ahead; and ``hand_back`` of a claim not made changes nothing."""
    with h.slow_bots(2, 0) as servers:
        first, second = _matches(context, servers, cycles=1)
        replay = h.play_alone(context, servers, first)
    ahead = ClaimAhead(second, 60)
    assert store(context.db, first, replay, claim=("w", 1), ahead=ahead)[0] is False  # never claimed by "w"
    assert ahead.row is None
    assert _rows(context, [first, second]) == [(MatchStatus.QUEUED, 0), (MatchStatus.QUEUED, 0)]


def test_a_batch_that_fails_right_after_a_record_hands_back_the_claim_it_made(queued_context, worker,
                                                                               monkeypatch) -> None:
    """Review finding: the refit request after the first match's record failed (Redis away), so the batch never
    got to the next match, and the claim that record had made ahead was left held for a lease and an attempt."""
    def refit_fails(_game: str, _players: int) -> None:
        raise ConnectionError("Redis went away")

    monkeypatch.setattr(queued_context.queue, "request_refit", refit_fails)
    with h.slow_bots(2, 0) as servers:
        ids = _matches(queued_context, servers)
        ids = [ids[1], ids[0], ids[2]]  # the batch's first closes its deal, so a refit is asked after its record:
        assert store(queued_context.db, ids[1], h.play_alone(queued_context, servers, ids[1]))[0]  # its twin is sealed
        with pytest.raises(ConnectionError):
            jobs.run_matches_job(ids[:1] + ids[2:])
    assert _rows(queued_context, [ids[0], ids[2]]) == [(MatchStatus.FINISHED, 1), (MatchStatus.QUEUED, 0)]


def test_a_claim_handed_back_late_leaves_another_workers_claim_alone(context) -> None:
    """A claim made ahead whose lease ran out and that another worker took meanwhile is not handed back over it."""
    with h.slow_bots(2, 0) as servers:
        first, second = _matches(context, servers, cycles=1)
        replay = h.play_alone(context, servers, first)
    with context.db.autocommit() as connection:
        assert claim(connection, first, "w", 60) is not None
    ahead = ClaimAhead(second, 0)  # a lease that runs out at once
    assert store(context.db, first, replay, claim=("w", 1), ahead=ahead)[0] and ahead.row is not None
    with context.db.autocommit() as connection:
        assert claim(connection, second, "other", 60).attempts == 2
    hand_back(context.db, ahead)
    assert _rows(context, [second]) == [(MatchStatus.RUNNING, 2)]


def test_a_record_sends_its_seal_the_claim_ahead_and_its_deals_read_together(context) -> None:
    """A worker's record asks for what it reads in one go (``read_together``): on PostgreSQL the seal, the next
    match's claim and the deal's read are sent in one pipeline (one round trip, with the transaction's BEGIN);
    on SQLite they run in the same order. The claim comes before the deal's read, in the same transaction: the
    deal (here the next match is the twin) reads it running, still open, so nothing is published."""
    with h.slow_bots(2, 0) as servers:
        first, second = _matches(context, servers, cycles=1)
        replay = h.play_alone(context, servers, first)
        urls = [server.url for server in servers]
    with context.db.autocommit() as connection:
        claimed = claim(connection, first, "w", 60)
    ahead = ClaimAhead(second, 60)
    with h.statements_sent(context.db.engine) as sent:
        recorded, published, deal = store(context.db, first, replay, claim=("w", 1), urls=urls, read_deal=True,
                                          ahead=ahead, known=claimed)
    piped = context.db.engine.dialect.name == "postgresql"
    assert sent[-3:] == [("UPDATE matches", piped), ("UPDATE matches", piped), ("SELECT matches", piped)], sent
    assert (recorded, published) == (True, False)
    assert deal.statuses == [(first, MatchStatus.SEALED), (second, MatchStatus.RUNNING)]
    assert ahead.take(second)[0].attempts == 1
    assert _rows(context, [first, second]) == [(MatchStatus.SEALED, 1), (MatchStatus.RUNNING, 1)]
