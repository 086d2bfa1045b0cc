"""The match queue on RQ: one job per match, the job id derived from the match id, ids only in the
payload. Several enqueues of one match are harmless: the worker's claim on the database row decides
who plays it (see ``arena.services.matches``)."""

from __future__ import annotations

import contextlib
import time
from datetime import timedelta

from redis import Redis
from rq import Queue, Retry
from rq.exceptions import NoSuchJobError
from rq.job import Job, JobStatus

from arena.config import Settings

JOB_FUNCTION = "arena.runtime.jobs.run_match_job"
REFIT_FUNCTION = "arena.runtime.jobs.refit_job"
REFIT_PENDING = "arena:{queue}:refit-pending:{game}:{players}"  # per queue: arenas may share a Redis
LADDER_WAKE = "arena:{queue}:ladder-wake"  # a list the ladder scheduler blocks on between ticks
LADDER_LOCK = "arena:{queue}:ladder-scheduler"  # held (with an expiry) by the one active ladder scheduler
REFIT_OVERDUE_S = 30.0  # a delayed refit this late past its time was lost (its scheduler's worker died)
LIVE = {JobStatus.QUEUED, JobStatus.STARTED, JobStatus.SCHEDULED, JobStatus.DEFERRED}


def job_id(match_id: int) -> str:
    return f"match-{match_id}"


def connect(url: str) -> Redis:
    return Redis.from_url(url, socket_timeout=30, socket_connect_timeout=10, health_check_interval=30)


class MatchQueue:
    def __init__(self, redis: Redis, settings: Settings) -> None:
        self.redis = redis
        self.settings = settings
        self.queue = Queue(settings.queue_name, connection=redis)

    def enqueue(self, match_id: int, at_front: bool = False) -> None:
        """``at_front``: ahead of what waits (a new bot's first ladder match)."""
        self.queue.enqueue(
            JOB_FUNCTION,
            match_id,
            job_id=job_id(match_id),
            at_front=at_front,
            job_timeout=self.settings.job_timeout_s,
            retry=Retry(max=3, interval=[1, 5, 15]),
            result_ttl=3600,
            failure_ttl=7 * 24 * 3600,
        )

    def request_refit(self, game: str, players: int) -> bool:
        """Queue a refit of one leaderboard unless one is already waiting (a burst of finished matches
        costs one refit; the job clears the flag when it starts, so later matches ask again).

        A delayed refit rests on RQ's scheduler, which runs inside one worker; when that worker is
        killed, the others take the scheduler over only at their next maintenance. So a request that
        finds a flag overdue by ``REFIT_OVERDUE_S`` queues the refit at once instead of waiting."""
        key = REFIT_PENDING.format(queue=self.settings.queue_name, game=game, players=players)
        delay = max(0.0, self.settings.refit_delay_s)
        options = {"job_timeout": self.settings.job_timeout_s, "retry": Retry(max=3, interval=[1, 5, 15]),
                   "result_ttl": 600, "failure_ttl": 24 * 3600, "at_front": True}
        now = time.time()
        if self.redis.set(key, repr(now), nx=True, ex=600):
            if delay > 0:  # gather the matches that finish meanwhile into the same refit
                self.queue.enqueue_in(timedelta(seconds=delay), REFIT_FUNCTION, game, players, **options)
            else:
                self.queue.enqueue(REFIT_FUNCTION, game, players, **options)
            return True
        requested = _as_time(self.redis.get(key))
        if requested is None or now - requested < delay + REFIT_OVERDUE_S:
            return False
        self.redis.set(key, repr(now), ex=600)
        self.queue.enqueue(REFIT_FUNCTION, game, players, **options)
        return True

    def refit_started(self, game: str, players: int) -> None:
        self.redis.delete(REFIT_PENDING.format(queue=self.settings.queue_name, game=game, players=players))

    def wake_ladder(self) -> None:
        """Have the ladder scheduler tick now (a bot was submitted, resumed or published a new version)."""
        key = LADDER_WAKE.format(queue=self.settings.queue_name)
        pipe = self.redis.pipeline()
        pipe.rpush(key, "1")
        pipe.expire(key, 60)
        pipe.execute()

    def wait_for_ladder_wake(self, timeout_s: float) -> bool:
        """Block until woken or ``timeout_s`` passed; True when woken (every pending wake is used up)."""
        key = LADDER_WAKE.format(queue=self.settings.queue_name)
        woken = self.redis.blpop([key], timeout=max(timeout_s, 0.01)) is not None
        if woken:
            self.redis.delete(key)
        return woken

    def is_live(self, match_id: int) -> bool:
        """True when RQ holds a job for this match that will still run (queued, started, scheduled)."""
        try:
            job = Job.fetch(job_id(match_id), connection=self.redis)
        except NoSuchJobError:
            return False
        return job.get_status(refresh=False) in LIVE

    def cancel(self, match_id: int) -> None:
        with contextlib.suppress(Exception):  # best effort: the database status decides
            Job.fetch(job_id(match_id), connection=self.redis).cancel()

    def depth(self) -> int:
        return len(self.queue)


def _as_time(value: bytes | str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None
