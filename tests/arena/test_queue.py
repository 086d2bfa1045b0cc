"""The match queue's refit requests against a real Redis."""

from __future__ import annotations

import time
from dataclasses import replace

from rq.registry import ScheduledJobRegistry

from arena.runtime.queue import REFIT_OVERDUE_S, REFIT_PENDING, MatchQueue, connect


def _queue(redis_url: str, settings) -> MatchQueue:
    return MatchQueue(connect(redis_url), settings)


def test_a_burst_of_requests_costs_one_delayed_refit(redis_url, settings) -> None:
    queue = _queue(redis_url, settings)
    assert settings.refit_delay_s > 0
    assert queue.request_refit("pajarracos", 3) is True
    assert [queue.request_refit("pajarracos", 3) for _ in range(5)] == [False] * 5
    scheduled = ScheduledJobRegistry(queue.queue.name, connection=queue.redis).get_job_ids()
    assert len(scheduled) == 1 and len(queue.queue) == 0
    queue.refit_started("pajarracos", 3)
    assert queue.request_refit("pajarracos", 3) is True  # asks again once the refit began


def test_refit_lost_with_a_killed_scheduler_is_queued_when_overdue(redis_url, settings) -> None:
    """Regression: a worker holding RQ's scheduler was SIGKILLed; the delayed refit never ran and the
    pending flag refused every later request, so leaderboards stayed stale for ten minutes."""
    queue = _queue(redis_url, settings)
    key = REFIT_PENDING.format(queue=settings.queue_name, game="piranha-pedro", players=4)
    queue.redis.set(key, repr(time.time() - settings.refit_delay_s - REFIT_OVERDUE_S - 1), ex=600)
    assert queue.request_refit("piranha-pedro", 4) is True
    assert [job.func_name for job in queue.queue.jobs] == ["arena.runtime.jobs.refit_job"]
    assert queue.request_refit("piranha-pedro", 4) is False  # the flag is fresh again


def test_refit_goes_ahead_of_queued_matches(redis_url, settings) -> None:
    """Refits go to the front: a tournament's queued matches must not hold its leaderboard back."""
    queue = _queue(redis_url, replace(settings, refit_delay_s=0))
    for match_id in (1, 2, 3):
        queue.enqueue(match_id)
    assert queue.request_refit("pajarracos", 4) is True
    assert queue.queue.jobs[0].func_name == "arena.runtime.jobs.refit_job"
