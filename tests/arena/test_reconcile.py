"""The reconciler against a real Redis (arena.services.reconcile): what it puts back in the queue, and where."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from sqlalchemy import update

from arena.runtime.queue import job_id
from arena.services.reconcile import reconcile
from arena.storage.models import Match, MatchStatus, utcnow
from tests.arena.test_ladder_scheduler import _bots, _tick


def test_a_match_whose_worker_was_cut_off_goes_ahead_of_the_queue(queued_context) -> None:
    """Regression (cluster test, worker partition): a match whose lease expired was enqueued at the back,
    so it waited for every queued match too, and the takeover after a cut took 9-15 s with a 4 s lease."""
    context = queued_context
    settings = replace(context.settings, ladder=True, ladder_players="2", ladder_in_flight=8, ladder_per_hour=10_000)
    _bots(context, 8)
    released = _tick(context, settings).release
    assert len(released) >= 3
    for match_id in released:
        context.queue.enqueue(match_id)
    abandoned = released[-1]
    with context.db.session() as session:
        session.execute(update(Match).where(Match.id == abandoned)
                        .values(status=MatchStatus.RUNNING, lease_until=utcnow() - timedelta(seconds=1)))
    with context.db.session() as session:
        outcome = reconcile(session, context.queue)
    assert outcome["ladder_expired_leases"] == 1 and outcome["ladder_requeued"] == 0
    assert context.queue.queue.job_ids[0] == job_id(abandoned)


def test_a_worker_killed_between_dequeue_and_claim_regression_left_its_match_owed_for_ten_minutes(
        queued_context) -> None:
    """Regression (test_arena_up_did_not_restart_a_killed_worker, 240 s at 23 of 24 matches): a worker
    SIGKILLed after RQ had marked its job started but before it claimed the match left the match
    ``queued`` in the database and "started" in RQ until RQ cleaned its registries, so the reconciler took
    it for live. A started job older than a lease whose match was never claimed is queued again."""
    from datetime import UTC, datetime

    from rq.job import Job, JobStatus

    context = queued_context
    settings = replace(context.settings, ladder=True, ladder_players="2", ladder_in_flight=8, ladder_per_hour=10_000)
    _bots(context, 4)
    taken, fresh = _tick(context, settings).release[:2]
    for match_id, age in ((taken, context.settings.match_lease_s + 1), (fresh, 0)):
        context.queue.enqueue(match_id)
        job = Job.fetch(job_id(match_id), connection=context.queue.redis)
        context.queue.queue.remove(job)  # what a worker's dequeue does, then it marks the job started
        job.started_at = datetime.now(UTC) - timedelta(seconds=age)
        job.set_status(JobStatus.STARTED)
        job.save()
    with context.db.session() as session:
        outcome = reconcile(session, context.queue)
    assert outcome["ladder_requeued"] == 1  # the dead worker's; the fresh one may still be claimed
    assert context.queue.queue.job_ids == [job_id(taken)]


def test_a_worker_killed_right_after_its_dequeue_regression_left_its_match_queued_in_name_only(
        queued_context) -> None:
    """Regression (test_arena_up_did_not_restart_a_killed_worker, again at 23 of 24 matches): RQ moves a
    dequeued job's id to the worker's intermediate queue before it marks the job started; a worker killed in
    between left a job RQ still called queued, in no queue, until RQ's maintenance ten minutes on."""
    context = queued_context
    settings = replace(context.settings, ladder=True, ladder_players="2", ladder_in_flight=8, ladder_per_hour=10_000)
    _bots(context, 4)
    taken, waiting = _tick(context, settings).release[:2]
    for match_id in (taken, waiting):
        context.queue.enqueue(match_id)
    redis = context.queue.redis
    redis.lmove(context.queue.queue.key, "intermediate-of-a-dead-worker", "LEFT", "RIGHT")  # the dequeue, no more
    assert context.queue.queue.job_ids == [job_id(waiting)]
    with context.db.session() as session:
        outcome = reconcile(session, context.queue)
    assert outcome["ladder_requeued"] == 1
    assert sorted(context.queue.queue.job_ids) == sorted([job_id(taken), job_id(waiting)])
