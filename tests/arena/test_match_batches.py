"""A tournament's matches in batch jobs (``MatchQueue.enqueue_many``, ``jobs.run_matches_job``), against a
real Redis: how they are cut, how the reconciler sees them, what a stop request and a dead worker leave."""

from __future__ import annotations

import signal
from datetime import UTC, datetime, timedelta
from itertools import pairwise

import pytest
from rq.job import Job, JobStatus
from sqlalchemy import select

from arena.runtime import jobs
from arena.runtime.queue import BATCH_FUNCTION, JOB_FUNCTION, JOBS_PER_WORKER, batch_id, batch_size, job_id
from arena.services import tournaments as tournament_service
from arena.services.accounts import create_account
from arena.services.claims import seat_urls
from arena.services.reconcile import reconcile
from arena.storage.models import Match
from tests.arena import service_harness as h
from tests.arena.test_claims import _matches as _claims_matches
from tests.arena.test_ladder_scheduler import _bots


def test_batch_size_shares_a_small_tournament_over_every_worker() -> None:
    assert batch_size(1000, 4, 8) == 8  # big: the largest batch
    assert batch_size(96, 4, 8) == 96 // (4 * JOBS_PER_WORKER)  # each worker still gets JOBS_PER_WORKER jobs
    assert batch_size(12, 4, 8) == 1  # small: a job per match, as many workers at work as before
    assert batch_size(100, 0, 8) == 8  # no worker registered yet: as for one
    assert batch_size(100, 1, 1) == 1  # ARENA_MATCHES_PER_JOB=1: one job per match


def _tournament(context, bots: int = 4) -> list[int]:
    ids = _bots(context, bots, "piranha-pedro")
    with context.db.session() as session:
        organizer, _token = create_account(session, "organizer", admin=True)
        tournament = tournament_service.create_tournament(session, organizer, {"game": "piranha-pedro", "bots": ids,
                                                                              "seats": 2}, b"k" * 32)
        tournament_id = tournament.id
    with context.db.session() as session:
        return list(session.scalars(select(Match.id).where(Match.tournament_id == tournament_id).order_by(Match.id)))


def test_a_tournament_goes_in_batches_of_consecutive_matches_that_the_reconciler_sees_live(queued_context) -> None:
    queue = queued_context.queue
    matches = _tournament(queued_context)
    assert len(matches) == 12
    assert queue.enqueue_many(matches, size=5) == 3
    assert queue.queue.job_ids == [batch_id(matches[:5]), batch_id(matches[5:10]), batch_id(matches[10:])]
    jobs_in_queue = queue.queue.jobs
    assert [job.func_name for job in jobs_in_queue] == [BATCH_FUNCTION] * 3
    assert jobs_in_queue[0].args == (matches[:5],)
    assert jobs_in_queue[0].timeout == queued_context.settings.job_timeout_s * 5  # a match's limit each
    assert queue.live(matches) == set(matches)
    with queued_context.db.session() as session:
        assert reconcile(session, queue)["requeued"] == 0  # nothing owed: every match is in a live batch
    assert len(queue.queue) == 3


def test_a_batch_of_one_is_the_matchs_own_job(queued_context) -> None:
    queue = queued_context.queue
    matches = _tournament(queued_context)
    queue.enqueue_many(matches[:2], size=1)
    assert queue.queue.job_ids == [job_id(matches[0]), job_id(matches[1])]
    assert [job.func_name for job in queue.queue.jobs] == [JOB_FUNCTION] * 2


def test_matches_of_a_batch_whose_worker_died_are_queued_again_once(queued_context) -> None:
    """A worker killed mid-batch leaves RQ calling the batch started, with its last heartbeat before the
    match it was playing. Once that is older than a lease, the batch's matches still queued are owed: each
    is queued as a job of its own, and no longer points to the dead batch, so the next reconcile (every
    15 s) does not queue it yet again (each pass would add one more job per match)."""
    queue = queued_context.queue
    matches = _tournament(queued_context)
    queue.enqueue_many(matches, size=4)
    dead = Job.fetch(batch_id(matches[:4]), connection=queue.redis)
    queue.queue.remove(dead)  # the dead worker's dequeue, then RQ marks it started and beats
    long_ago = datetime.now(UTC) - timedelta(seconds=queued_context.settings.match_lease_s + 1)
    dead.started_at = long_ago
    dead.set_status(JobStatus.STARTED)
    dead.save()
    dead.heartbeat(long_ago, 60)
    assert queue.live(matches) == set(matches[4:])
    with queued_context.db.session() as session:
        assert reconcile(session, queue)["requeued"] == 4
    assert queue.queue.job_ids[-4:] == [job_id(match_id) for match_id in matches[:4]]
    assert queue.live(matches) == set(matches)
    with queued_context.db.session() as session:
        assert reconcile(session, queue)["requeued"] == 0


def test_a_batch_that_beat_within_a_lease_is_live(queued_context) -> None:
    """Started long ago, but it beat before its latest match: its worker is alive and on its way."""
    queue = queued_context.queue
    matches = _tournament(queued_context)
    queue.enqueue_many(matches, size=12)
    job = Job.fetch(batch_id(matches), connection=queue.redis)
    queue.queue.remove(job)
    job.started_at = datetime.now(UTC) - timedelta(seconds=10 * queued_context.settings.match_lease_s)
    job.set_status(JobStatus.STARTED)
    job.save()
    job.heartbeat(datetime.now(UTC), 60)
    assert queue.live(matches) == set(matches)


@pytest.fixture
def stopping():
    jobs.STOPPING.set()
    yield
    jobs.STOPPING.clear()


def test_a_batch_whose_worker_is_stopping_hands_its_matches_back_in_order(queued_context, stopping) -> None:
    """A stop request (SIGTERM: ``ArenaWorker.request_stop``) ends a batch after its current match; the
    matches it had not begun go to the front of the queue, in their order, as jobs of their own."""
    queue = queued_context.queue
    matches = _tournament(queued_context)
    queue.enqueue(matches[-1])  # already waiting
    jobs.set_worker_context(queued_context)
    try:
        assert jobs.run_matches_job(matches[:3]) == []
    finally:
        jobs.set_worker_context(None)
    assert queue.queue.job_ids == [job_id(m) for m in matches[:3]] + [job_id(matches[-1])]


def test_a_batch_asks_for_a_boards_refit_at_once_then_at_most_once_per_delay_and_at_its_end() -> None:
    sent: list[tuple[str, int]] = []
    refits = jobs.Refits(lambda game, players: sent.append((game, players)), every_s=60)
    for _ in range(5):
        refits.request("pajarracos", 3)
    refits.request("piranha-pedro", 2)
    assert sent == [("pajarracos", 3), ("piranha-pedro", 2)]
    refits.flush()
    assert sent == [("pajarracos", 3), ("piranha-pedro", 2), ("pajarracos", 3)]
    refits.flush()
    assert len(sent) == 3  # nothing held back any more
    every_time: list[tuple[str, int]] = []
    at_once = jobs.Refits(lambda game, players: every_time.append((game, players)), every_s=0)
    at_once.request("pajarracos", 3)
    at_once.request("pajarracos", 3)
    at_once.flush()
    assert len(every_time) == 2  # ARENA_REFIT_DELAY_S=0: a refit after every match


class FakeJob:
    """What ``run_matches_job`` asks of RQ's current job: its record's key and connection, and a heartbeat."""

    def __init__(self, redis, key: str) -> None:  # type: ignore[no-untyped-def]
        self.connection, self.key = redis, key
        self.beats: list[datetime] = []

    def heartbeat(self, timestamp: datetime, ttl: int) -> None:
        self.beats.append(timestamp)


@pytest.fixture
def batch_job(queued_context, monkeypatch):  # type: ignore[no-untyped-def]
    """``run_matches_job`` as RQ runs it: a current job, the worker's context."""
    queue = queued_context.queue
    queue.redis.hset("rq:job:fake-batch", "status", "started")
    job = FakeJob(queue.redis, "rq:job:fake-batch")
    monkeypatch.setattr(jobs, "get_current_job", lambda: job)
    jobs.set_worker_context(queued_context)
    yield job
    jobs.set_worker_context(None)
    queue.redis.delete("rq:job:fake-batch")


def test_a_batch_beats_before_its_first_match_then_once_per_quarter_lease(queued_context, batch_job) -> None:
    """The reconciler calls a started batch alive while its beat is younger than a lease (``live``): a batch
    that did not beat would have its matches queued again as soon as it had run a lease."""
    assert jobs.run_matches_job([10_001, 10_002, 10_003]) == ["skipped"] * 3  # no such matches: nothing to play
    assert len(batch_job.beats) == 1  # three skipped matches take far less than a quarter lease


def test_a_batch_whose_record_vanished_writes_no_heartbeat_into_it(queued_context, batch_job) -> None:
    """A heartbeat is a field written into RQ's record of the job: written after the record was removed
    (Redis restarted, ``rq`` emptied), it would leave a record without a job for the reconciler to trip on."""
    queued_context.queue.redis.delete(batch_job.key)
    jobs.run_matches_job([10_001])
    assert batch_job.beats == [] and not queued_context.queue.redis.exists(batch_job.key)


def test_each_match_of_a_batch_gets_the_job_time_limit_not_the_batch(queued_context, batch_job) -> None:
    """RQ's limit for a batch is ``job_timeout_s`` times its size; each match is held to ``job_timeout_s``:
    the alarm RQ's death penalty set is set again as each match starts."""
    previous = signal.signal(signal.SIGALRM, lambda *_: None)  # RQ's death penalty installs a handler
    try:
        signal.alarm(queued_context.settings.job_timeout_s * 8)
        jobs.run_matches_job([10_001])
        left = signal.alarm(0)
    finally:
        signal.signal(signal.SIGALRM, previous)
    assert queued_context.settings.job_timeout_s - 5 <= left <= queued_context.settings.job_timeout_s


def test_a_broken_job_record_regression_would_have_stopped_the_reconciler(queued_context) -> None:
    """Review finding: RQ's ``fetch_many`` raises for a record without its data (a heartbeat written into a
    vanished record left one); the reconciler stopped there for every match. It is now a job that is gone."""
    queue = queued_context.queue
    matches = _tournament(queued_context)
    queue.enqueue_many(matches[:4], size=4)
    queue.redis.delete(f"rq:job:{batch_id(matches[:4])}")
    queue.redis.hset(f"rq:job:{batch_id(matches[:4])}", "last_heartbeat", "2026-12-03T00:00:00Z")
    assert queue.live(matches[:4]) == set()
    with queued_context.db.session() as session:
        assert reconcile(session, queue)["requeued"] == 12


def test_a_batch_opens_a_connection_per_bot_not_one_per_match_and_seat(queued_context, batch_job, spy) -> None:
    """The batch's matches hand their idle connections on (``referee.connection_keeper``): six matches of two
    bots open two connections, where each match opened one per seat; the batch closes them at its end."""
    with h.slow_bots(2, 0) as servers:
        ids = _claims_matches(queued_context, servers, cycles=3)
        before = len(spy.attempts)  # (registering the bots checked them over connections of their own)
        assert jobs.run_matches_job(ids) == ["recorded"] * 6
        assert len(spy.attempts) - before == 2


def test_a_batch_whose_next_match_is_not_played_drops_its_idle_connections(queued_context, batch_job, spy) -> None:
    """Review finding: idle connections were dropped only when a match opened its seats, so a skipped match (or
    one given up, or lost) left them held while no match of the batch played their bots."""
    with h.slow_bots(2, 0) as servers:
        ids = _claims_matches(queued_context, servers, cycles=1)
        before = len(spy.attempts)
        assert jobs.run_matches_job([ids[0], 10_001, ids[1]]) == ["recorded", "skipped", "recorded"]
        assert len(spy.attempts) - before == 4  # the second match opens its own: none were held across the skip


def test_a_batch_connects_its_next_matchs_new_bots_while_it_records_the_match_before(queued_context, batch_job,
                                                                                       spy) -> None:
    """Only the first match opens connections at /start: each bot a match seats that the match before did not was
    connected while that one was being recorded (``referee.connect_ahead``), and /start went on that connection."""
    with h.slow_bots(4, 0) as servers:
        ids = _claims_matches(queued_context, servers, cycles=1)
        urls = seat_urls(queued_context.db, ids)
        assert sorted(urls) == ids and {len(seats) for seats in urls.values()} == {2}
        assert set().union(*urls.values()) == {server.url.rstrip("/") for server in servers}
        new = sum(len(set(urls[after]) - set(urls[before])) for before, after in pairwise(ids))
        attempts, ahead = len(spy.attempts), len(spy.ahead)
        assert jobs.run_matches_job(ids) == ["recorded"] * len(ids)
        assert len(spy.ahead) - ahead == new > 0
        assert len(spy.attempts) - attempts == new + 2


def test_a_batch_whose_seat_urls_cannot_be_read_plays_on_opening_connections_at_start(queued_context, batch_job,
                                                                                        spy, monkeypatch) -> None:
    """Review finding: the seat URLs (only a saving) were read before the batch's first claim with nothing to catch
    a failure, so a database hiccup there failed the whole batch."""
    def unreadable(*args: object) -> dict:
        raise RuntimeError("the database went away")

    monkeypatch.setattr(jobs, "seat_urls", unreadable)
    with h.slow_bots(4, 0) as servers:
        ids = _claims_matches(queued_context, servers, cycles=1)
        ahead = len(spy.ahead)
        assert jobs.run_matches_job(ids) == ["recorded"] * len(ids)
        assert len(spy.ahead) == ahead
