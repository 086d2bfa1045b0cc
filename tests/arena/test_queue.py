"""The match queue's refit requests against a real Redis."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import replace

import pytest
from rq.registry import ScheduledJobRegistry

from arena.runtime.queue import REFIT_OVERDUE_S, REFIT_PENDING, MatchQueue, connect


@pytest.fixture
def make_queue() -> Iterator[Callable[..., MatchQueue]]:
    """Queues on clients this test closes. Regression (CI): a client left to the garbage collector is freed
    in a reference cycle (redis-py 8's event dispatcher and maintenance handlers hold them), where its socket
    may be freed unclosed: once in CI, the module's final collection (tests/conftest.py) raised a
    ResourceWarning for an unclosed socket to Redis at the teardown of this module's last test."""
    made: list[MatchQueue] = []

    def make(redis_url: str, settings) -> MatchQueue:
        made.append(MatchQueue(connect(redis_url), settings))
        return made[-1]

    yield make
    for queue in made:
        queue.close()


def test_a_burst_of_requests_costs_one_delayed_refit(redis_url, settings, make_queue) -> None:
    queue = make_queue(redis_url, settings)
    assert settings.refit_delay_s > 0
    assert queue.request_refit("pajarracos", 3) is True
    assert [queue.request_refit("pajarracos", 3) for _ in range(5)] == [False] * 5
    scheduled = ScheduledJobRegistry(queue.queue.name, connection=queue.redis).get_job_ids()
    assert len(scheduled) == 1 and len(queue.queue) == 0
    queue.refit_started("pajarracos", 3)
    assert queue.request_refit("pajarracos", 3) is True  # asks again once the refit began


def test_refit_lost_with_a_killed_scheduler_is_queued_when_overdue(redis_url, settings, make_queue) -> None:
    """Regression: a worker holding RQ's scheduler was SIGKILLed; the delayed refit never ran and the
    pending flag refused every later request, so leaderboards stayed stale for ten minutes."""
    queue = make_queue(redis_url, settings)
    key = REFIT_PENDING.format(queue=settings.queue_name, game="piranha-pedro", players=4)
    queue.redis.set(key, repr(time.time() - settings.refit_delay_s - REFIT_OVERDUE_S - 1), ex=600)
    assert queue.request_refit("piranha-pedro", 4) is True
    assert [job.func_name for job in queue.queue.jobs] == ["arena.runtime.jobs.refit_job"]
    assert queue.request_refit("piranha-pedro", 4) is False  # the flag is fresh again


def test_refit_goes_ahead_of_queued_matches(redis_url, settings, make_queue) -> None:
    """Refits go to the front: a tournament's queued matches must not hold its leaderboard back."""
    queue = make_queue(redis_url, replace(settings, refit_delay_s=0))
    for match_id in (1, 2, 3):
        queue.enqueue(match_id)
    assert queue.request_refit("pajarracos", 4) is True
    assert queue.queue.jobs[0].func_name == "arena.runtime.jobs.refit_job"


def test_wake_with_redis_cut_off_regression_a_bot_submission_answered_27_s_later(settings, make_queue) -> None:
    """The ladder wake after a bot's commit used the queue's connection (30 s timeout): with Redis cut off
    (the cluster test's web/db partition) the submitting web request waited 27 s, near gunicorn's limit.
    A wake now gives up after ``WAKE_TIMEOUT_S``; the scheduler's next tick sees the bot anyway."""
    import socket

    import pytest
    from redis.exceptions import RedisError

    from arena.runtime.queue import WAKE_TIMEOUT_S

    silent = socket.socket()  # accepts (the kernel does) and never answers: a peer behind a cut link
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    try:
        queue = make_queue(f"redis://127.0.0.1:{silent.getsockname()[1]}/0", settings)
        started = time.monotonic()
        with pytest.raises(RedisError):
            queue.wake_ladder()
        assert time.monotonic() - started < WAKE_TIMEOUT_S * 3
    finally:
        silent.close()


def test_the_ladder_counts_the_workers_listening_on_its_queue(redis_url, settings, make_queue) -> None:
    """The ladder keeps ``ARENA_LADDER_SPARE_WORKERS`` of them free for newcomers: it must see them come and go
    (and only its own queue's: arenas may share a Redis)."""
    from rq import Queue, SimpleWorker

    queue = make_queue(redis_url, settings)
    assert queue.workers() == 0
    mine = SimpleWorker([queue.queue], connection=queue.redis, name="mine")
    other = SimpleWorker([Queue("another-arena", connection=queue.redis)], connection=queue.redis, name="other")
    mine.register_birth()
    other.register_birth()
    try:
        assert queue.workers() == 1
    finally:
        mine.register_death()
        other.register_death()
    assert queue.workers() == 0


def test_a_long_refit_makes_the_next_one_wait_so_refits_take_a_bounded_share(redis_url, settings,
                                                                               make_queue) -> None:
    """Issue 19: refitting a board of 100,000 matches every ``refit_delay_s`` cost every match of it
    several ms; after a refit of 1 s the next waits 19 s (refits 5 % of the time), capped at 30 s."""
    queue = make_queue(redis_url, settings)
    registry = ScheduledJobRegistry(queue.queue.name, connection=queue.redis)
    queue.refit_finished("pajarracos", 3, 1.0)
    before = time.time()
    assert queue.request_refit("pajarracos", 3) is True
    [(_job_id, due)] = queue.redis.zrange(registry.key, 0, -1, withscores=True)
    assert 18 <= due - before <= 20
    assert [queue.request_refit("pajarracos", 3) for _ in range(3)] == [False] * 3  # still one refit waiting
    queue.refit_started("pajarracos", 3)
    queue.refit_finished("pajarracos", 3, 100.0)
    assert 29_000 <= queue.redis.pttl(f"arena:{settings.queue_name}:refit-cooldown:pajarracos:3") <= 30_000
    quick = make_queue(redis_url, replace(settings, refit_delay_s=0))
    quick.refit_finished("piranha-pedro", 2, 1.0)  # a refit after every match was asked for: no wait
    assert quick.request_refit("piranha-pedro", 2) is True and len(quick.queue) == 1
