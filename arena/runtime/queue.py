"""The match queue on RQ: one job per match, the job id derived from the match id, ids only in the
payload. Several enqueues of one match are harmless: the worker's claim on the database row decides
who plays it (see ``arena.services.matches``)."""

from __future__ import annotations

import contextlib
import time
from datetime import timedelta

from redis import Redis
from redis.backoff import NoBackoff
from redis.retry import Retry as RedisRetry
from rq import Queue, Retry, Worker
from rq.exceptions import NoSuchJobError
from rq.job import Job, JobStatus

from arena.config import Settings

JOB_FUNCTION = "arena.runtime.jobs.run_match_job"
REFIT_FUNCTION = "arena.runtime.jobs.refit_job"
REFIT_PENDING = "arena:{queue}:refit-pending:{game}:{players}"  # per queue: arenas may share a Redis
LADDER_WAKE = "arena:{queue}:ladder-wake"  # a list the ladder scheduler blocks on between ticks
LADDER_LOCK = "arena:{queue}:ladder-scheduler"  # held (with an expiry) by the one active ladder scheduler
REFIT_COOLDOWN = "arena:{queue}:refit-cooldown:{game}:{players}"  # set by a refit as it ends (``refit_finished``)
REFIT_SHARE = 0.05  # a board's refits take at most this share of the time: a long refit waits longer for the next
REFIT_COOLDOWN_MAX_S = 30.0  # however big the board, its fit is never more than this (plus the refit) behind
REFIT_OVERDUE_S = 30.0  # a delayed refit this late past its time was lost (its scheduler's worker died)
WAKE_TIMEOUT_S = 1.0  # a ladder wake is a hint: never worth holding a web request longer
LIVE = {JobStatus.QUEUED, JobStatus.STARTED, JobStatus.SCHEDULED, JobStatus.DEFERRED}


def job_id(match_id: int) -> str:
    return f"match-{match_id}"


def connect(url: str) -> Redis:
    return Redis.from_url(url, socket_timeout=30, socket_connect_timeout=10, health_check_interval=30)


def impatient(redis: Redis, timeout_s: float, connections: int) -> Redis:
    """A client of ``redis``'s server whose connects and reads give up after ``timeout_s``, on a pool of
    its own (at most ``connections``), for what a web request asks of Redis only as a hint: on the shared
    connection's 30 s, a request started as Redis was cut off waited out the cut and more."""
    kwargs = dict(redis.connection_pool.connection_kwargs)
    # and once: redis-py tries a timed-out command three more times, with backoff (29 s for two reads)
    kwargs.update(socket_timeout=timeout_s, socket_connect_timeout=timeout_s, retry=RedisRetry(NoBackoff(), 0))
    return Redis(connection_pool=redis.connection_pool.__class__(
        connection_class=redis.connection_pool.connection_class, max_connections=connections, **kwargs))


class MatchQueue:
    def __init__(self, redis: Redis, settings: Settings) -> None:
        self.redis = redis
        self.settings = settings
        self._wake_redis: Redis | None = None
        self.queue = Queue(settings.queue_name, connection=redis)

    def close(self) -> None:
        """Close its clients' connections. One left to the garbage collector is freed in a reference cycle
        (redis-py's event dispatcher), where its socket may be dropped unclosed: a ResourceWarning."""
        self.redis.close()
        if self._wake_redis is not None:
            self._wake_redis.close()

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
        costs one refit; the job clears the flag when it starts, so later matches ask again). One Redis
        round trip when a refit is already waiting (every match but the first of a burst).

        The refit waits ``refit_delay_s``, or longer after a long refit of the same board (``refit_finished``):
        refitting a big board (O(matches)) then costs at most ``REFIT_SHARE`` of the time, and 100,000 stored
        matches do not slow every match down.

        A delayed refit rests on RQ's scheduler, which runs inside one worker; when that worker is
        killed, the others take the scheduler over only at their next maintenance. So a request that
        finds a flag overdue by ``REFIT_OVERDUE_S`` queues the refit at once instead of waiting."""
        names = {"queue": self.settings.queue_name, "game": game, "players": players}
        key = REFIT_PENDING.format(**names)
        now = time.time()
        pipe = self.redis.pipeline(transaction=False)
        pipe.set(key, repr(now), nx=True, ex=600)
        pipe.pttl(REFIT_COOLDOWN.format(**names))
        pipe.get(key)
        flagged, cooldown_ms, requested = pipe.execute()
        delay = max(0.0, self.settings.refit_delay_s, (cooldown_ms or 0) / 1000)
        options = {"job_timeout": self.settings.job_timeout_s, "retry": Retry(max=3, interval=[1, 5, 15]),
                   "result_ttl": 600, "failure_ttl": 24 * 3600, "at_front": True}
        if flagged:
            if delay > 0:  # gather the matches that finish meanwhile into the same refit
                self.queue.enqueue_in(timedelta(seconds=delay), REFIT_FUNCTION, game, players, **options)
            else:
                self.queue.enqueue(REFIT_FUNCTION, game, players, **options)
            return True
        requested = _as_time(requested)
        if requested is None or now - requested < delay + REFIT_OVERDUE_S:
            return False
        self.redis.set(key, repr(now), ex=600)
        self.queue.enqueue(REFIT_FUNCTION, game, players, **options)
        return True

    def refit_started(self, game: str, players: int) -> None:
        self.redis.delete(REFIT_PENDING.format(queue=self.settings.queue_name, game=game, players=players))

    def refit_finished(self, game: str, players: int, seconds: float) -> None:
        """A refit of the board took ``seconds``: its next refit waits long enough that refits take at most
        ``REFIT_SHARE`` of the time (capped at ``REFIT_COOLDOWN_MAX_S``). Not with ``refit_delay_s`` 0, which
        asks for a refit after every match."""
        wait_s = min(REFIT_COOLDOWN_MAX_S, seconds * (1 / REFIT_SHARE - 1))
        if self.settings.refit_delay_s > 0 and wait_s > self.settings.refit_delay_s:
            self.redis.set(REFIT_COOLDOWN.format(queue=self.settings.queue_name, game=game, players=players), "1",
                           px=int(wait_s * 1000))

    def wake_ladder(self) -> None:
        """Have the ladder scheduler tick now (a bot was submitted, resumed or published a new version).

        On a connection of its own that gives up after ``WAKE_TIMEOUT_S``: a wake is only a hint (the next
        tick sees the change anyway), and the web request that submitted the bot waits for it. On the
        queue's connection (30 s) a submission committed just before Redis was cut off answered 27 s later,
        close to gunicorn's 30 s limit (the cluster test's web/db partition, the ladder running)."""
        if self._wake_redis is None:
            self._wake_redis = impatient(self.redis, WAKE_TIMEOUT_S, 4)
        key = LADDER_WAKE.format(queue=self.settings.queue_name)
        pipe = self._wake_redis.pipeline()
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

    def is_live(self, match_id: int, now: float | None = None) -> bool:
        """True when RQ holds a job for this match that will still run (queued, started, scheduled).

        Only asked about matches the database still calls ``queued``, i.e. not claimed yet. A job RQ
        calls started that long ago without a claim was taken by a worker that died between dequeue and
        claim: RQ keeps calling it started until its registries are cleaned (every ten minutes), so it is
        not live once it is older than a lease (a live worker claims within milliseconds of starting)."""
        try:
            job = Job.fetch(job_id(match_id), connection=self.redis)
        except NoSuchJobError:
            return False
        status = job.get_status(refresh=False)
        if status == JobStatus.QUEUED:  # and still in the queue: a worker killed right after its dequeue
            # (RQ moves the id to the worker's intermediate queue, then marks it started) left it "queued"
            # until RQ's maintenance, ten minutes on. A live worker's move lasts milliseconds; were one
            # caught in it, the match's claim keeps the second job from playing it again.
            return self.redis.lpos(self.queue.key, job.id) is not None
        if status == JobStatus.STARTED and job.started_at is not None:
            now = time.time() if now is None else now
            return now - job.started_at.timestamp() <= self.settings.match_lease_s
        return status in LIVE

    def cancel(self, match_id: int) -> None:
        with contextlib.suppress(Exception):  # best effort: the database status decides
            Job.fetch(job_id(match_id), connection=self.redis).cancel()

    def workers(self) -> int:
        """Workers registered on this queue (a worker killed with -9 stays counted until RQ prunes it)."""
        return Worker.count(connection=self.redis, queue=self.queue)

    def depth(self) -> int:
        return len(self.queue)


def _as_time(value: bytes | str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None
