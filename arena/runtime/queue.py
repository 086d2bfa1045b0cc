"""The match queue on RQ, ids only in the payloads. A ladder or reconciled match is a job of its own, its id
derived from the match id; a tournament's matches go in jobs of up to ``matches_per_job`` consecutive
matches (``enqueue_many``), which RQ's own cost per job (ten Redis round trips, milliseconds of CPU) is then
paid once for, each match still claimed, leased and recorded on its own (docs/benchmarks.md, issue 19 goal 4).
Several enqueues of one match are harmless: the worker's claim on the database row decides who plays it
(see ``arena.services.matches``)."""

from __future__ import annotations

import contextlib
import time
from datetime import timedelta

from redis import Redis
from redis.backoff import NoBackoff
from redis.retry import Retry as RedisRetry
from rq import Queue, Retry, Worker
from rq.job import Job, JobStatus
from rq.queue import EnqueueData

from arena.config import Settings

JOB_FUNCTION = "arena.runtime.jobs.run_match_job"
BATCH_FUNCTION = "arena.runtime.jobs.run_matches_job"
JOB_OF = "arena:{queue}:job-of:{match}"  # the batch job that holds a match (a match alone: ``job_id``)
FAILURE_TTL_S = 7 * 24 * 3600  # a match job that failed is kept this long (and a batched match's pointer)
JOBS_PER_WORKER = 8  # a batch is small enough that each worker gets this many jobs: the last ones end together
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


def batch_id(match_ids: list[int]) -> str:
    return f"matches-{match_ids[0]}-{match_ids[-1]}"


def batch_size(matches: int, workers: int, most: int) -> int:
    """Matches per job for ``matches`` queued at once: at most ``most``, and few enough that each of the
    ``workers`` (at least one) gets ``JOBS_PER_WORKER`` jobs, so a small tournament is still shared out
    over every worker and none is left playing a long batch alone at the end."""
    return max(1, min(most, -(-matches // (max(1, workers) * JOBS_PER_WORKER))))


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
        """A job of the match's own; ``at_front``: ahead of what waits (a new bot's first ladder match, a
        match whose worker died). It no longer points to a batch it was in (``JOB_OF``): that batch is
        over or dead, else the reconciler would not queue the match again."""
        pipe = self.redis.pipeline()
        self.queue.enqueue_many([self._job([match_id], at_front)], pipeline=pipe)
        pipe.delete(self._job_of(match_id))
        pipe.execute()

    def enqueue_many(self, match_ids: list[int], size: int | None = None) -> int:
        """Queue ``match_ids`` in order, consecutive ones together in jobs of ``size`` (default: ``batch_size``
        for the workers registered now); returns the jobs. Each match of a batch points to its job
        (``JOB_OF``) for the reconciler (``live``), in the same round trip as the enqueue."""
        if size is None:
            size = batch_size(len(match_ids), self.workers() if len(match_ids) > 1 else 1,
                              self.settings.matches_per_job)
        pipe = self.redis.pipeline()
        datas = []
        for start in range(0, len(match_ids), size):
            batch = match_ids[start:start + size]
            datas.append(self._job(batch))
            if len(batch) > 1:
                for match_id in batch:
                    pipe.set(self._job_of(match_id), batch_id(batch), ex=FAILURE_TTL_S)
        self.queue.enqueue_many(datas, pipeline=pipe)
        pipe.execute()
        return len(datas)

    def _job(self, match_ids: list[int], at_front: bool = False) -> EnqueueData:
        """RQ's job for these matches: one match's own (``job_id``), or a batch of them, with
        ``job_timeout_s`` for each (``jobs.run_matches_job`` holds each match to it)."""
        function, args, name = ((JOB_FUNCTION, (match_ids[0],), job_id(match_ids[0])) if len(match_ids) == 1
                                else (BATCH_FUNCTION, (match_ids,), batch_id(match_ids)))
        return Queue.prepare_data(function, args, job_id=name, at_front=at_front,
                                  timeout=self.settings.job_timeout_s * len(match_ids),
                                  retry=Retry(max=3, interval=[1, 5, 15]), result_ttl=3600,
                                  failure_ttl=FAILURE_TTL_S)

    def _job_of(self, match_id: int) -> str:
        return JOB_OF.format(queue=self.settings.queue_name, match=match_id)

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
        """True when RQ holds a job for this match that will still run (queued, started, scheduled)."""
        return match_id in self.live([match_id], now)

    def live(self, match_ids: list[int], now: float | None = None) -> set[int]:
        """Those of ``match_ids`` for which RQ holds a job that will still run (queued, started, scheduled),
        in three round trips whatever their number: the jobs that hold them, those jobs, the queue.

        Only asked about matches the database still calls ``queued``, i.e. not claimed yet. A job RQ
        calls started without a heartbeat (RQ's at its start, a batch's before each match) for longer than
        a lease was taken by a worker that died between dequeue and claim, or mid-batch: RQ keeps calling
        it started until its registries are cleaned (every ten minutes), so it is not live (a live worker
        claims within milliseconds of starting or of its last match). A batch whose matches are slower
        than that is shared out too: its matches are queued again, and the claim lets only one job play each."""
        if not match_ids:
            return set()
        pipe = self.redis.pipeline(transaction=False)
        for match_id in match_ids:
            pipe.get(self._job_of(match_id))
        names = [_text(held) if held else job_id(match_id)
                 for match_id, held in zip(match_ids, pipe.execute(), strict=True)]
        distinct = list(dict.fromkeys(names))
        now = time.time() if now is None else now
        waiting: set[str] | None = None
        alive = set()
        for name, job in zip(distinct, self._jobs(distinct), strict=True):
            if job is None:
                continue
            status = job.get_status(refresh=False)
            if status == JobStatus.QUEUED:  # and still in the queue: a worker killed right after its dequeue
                # (RQ moves the id to the worker's intermediate queue, then marks it started) left it "queued"
                # until RQ's maintenance, ten minutes on. A live worker's move lasts milliseconds; were one
                # caught in it, the match's claim keeps the second job from playing it again.
                if waiting is None:
                    waiting = set(self.queue.get_job_ids())
                if name in waiting:
                    alive.add(name)
            elif status == JobStatus.STARTED:
                beats = [moment.timestamp() for moment in (job.started_at, job.last_heartbeat) if moment is not None]
                if beats and now - max(beats) <= self.settings.match_lease_s:
                    alive.add(name)
            elif status in LIVE:
                alive.add(name)
        return {match_id for match_id, name in zip(match_ids, names, strict=True) if name in alive}

    def _jobs(self, names: list[str]) -> list[Job | None]:
        """RQ's jobs by id, None for one that is gone or whose record is broken (a record without its data
        raises in ``fetch_many``: one such must not stop the reconciler for every match)."""
        try:
            return Job.fetch_many(names, connection=self.redis)
        except Exception:
            jobs: list[Job | None] = []
            for name in names:
                try:
                    jobs.append(Job.fetch(name, connection=self.redis))
                except Exception:
                    jobs.append(None)
            return jobs

    def cancel(self, match_id: int) -> None:
        """Cancel the match's own job; a batch is left to play its other matches (the database status
        decides: a cancelled match is not claimed)."""
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


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
