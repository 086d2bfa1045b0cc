"""``arena worker``: an RQ worker for the match queue, plus the reconciler, surviving Redis restarts.

Any number of workers on any number of hosts may share one Redis and one database. Each runs matches
one at a time in its own process (RQ ``SimpleWorker``: no fork per match; a match waits on the
network, so run several workers per core). Every ``reconcile_interval_s`` one of them (a Redis lock
picks which) re-queues what the database says is unfinished.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from typing import Any

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError
from rq import SimpleWorker
from rq.exceptions import StopRequested

from arena.composition import Context
from arena.runtime.jobs import STOPPING, set_worker_context, worker_name
from arena.services.reconcile import reconcile

log = logging.getLogger("arena.runtime.worker")
RECONCILE_LOCK = "arena:{queue}:reconcile-lock"


def reconcile_once(context: Context) -> dict[str, int] | None:
    """Run the reconciler if no other worker did within the interval; None when skipped."""
    assert context.queue is not None
    redis = context.queue.redis
    lock = RECONCILE_LOCK.format(queue=context.settings.queue_name)
    if not redis.set(lock, worker_name(), nx=True, ex=max(1, context.settings.reconcile_interval_s)):
        return None
    with context.db.session() as session:
        return reconcile(session, context.queue)


class ArenaWorker(SimpleWorker):
    """RQ's ``SimpleWorker`` with fewer Redis round trips per job, the same keys and the same expiries.

    - A heartbeat outside a pipeline is sent as one (HSET and two EXPIREs in one round trip, not three).
    - A heartbeat is skipped when one was sent less than ``BEAT_EVERY_S`` ago with an expiry at least as
      long: RQ's loop beats at each turn, after the dequeue and after the job, and the key's expiry
      (``worker_ttl`` + 60 s) is minutes, so those beats a few milliseconds apart extended nothing.
    - The state is written only when it changes (RQ writes "idle" twice between two jobs).
    Per job: 14 round trips -> 10 (docs/benchmarks.md, ``bench.throughput rq``). And it stops within a
    second of being asked (``subscribe``)."""

    BEAT_EVERY_S = 1.0
    PUBSUB_WAKE_S = 1.0  # how long stopping may wait for the thread listening for RQ's commands (``subscribe``)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._beaten_at, self._beaten_for = float("-inf"), 0

    def heartbeat(self, timeout: int | None = None, pipeline: Any = None) -> None:
        ttl = timeout or self.worker_ttl + 60
        now = time.monotonic()
        if pipeline is None and now - self._beaten_at < self.BEAT_EVERY_S and ttl <= self._beaten_for:
            return
        if pipeline is not None:
            super().heartbeat(timeout, pipeline=pipeline)
        else:
            pipe = self.connection.pipeline(transaction=False)
            super().heartbeat(timeout, pipeline=pipe)
            pipe.execute()
        self._beaten_at, self._beaten_for = now, ttl

    def subscribe(self) -> None:
        """RQ's, with the thread listening for commands waking every second instead of every minute. Since
        redis-py 8, ``PubSubWorkerThread.stop`` waits for that thread, and once unsubscribed it sleeps out its
        whole period: a worker stopped by SIGTERM then hung up to 60 s in RQ's teardown (``unsubscribe``),
        a minute more on top of the match in play: past docker's default 10 s, and near our own 60 s grace
        (deploy/docker-compose.yml). CI saw it as a worker, SIGTERMed mid-batch, that outlived the test's 15 s."""
        self.pubsub = self.connection.pubsub()
        self.pubsub.subscribe(**{self.pubsub_channel_name: self.handle_payload})
        self.pubsub_thread = self.pubsub.run_in_thread(
            sleep_time=self.PUBSUB_WAKE_S, daemon=True,
            exception_handler=self._pubsub_exception_handler)

    def request_stop(self, signum: Any, frame: Any) -> None:
        """RQ's warm shutdown, and a batch in play ends after its current match (``jobs.run_matches_job``)."""
        STOPPING.set()
        super().request_stop(signum, frame)

    def set_state(self, state: str, pipeline: Any = None) -> None:
        if pipeline is None and state == self.get_state():
            return
        super().set_state(state, pipeline=pipeline)


class Reconciler(threading.Thread):
    def __init__(self, context: Context) -> None:
        super().__init__(name="arena-reconciler", daemon=True)
        self.context = context
        self.stopping = threading.Event()

    def run(self) -> None:
        interval = max(1, self.context.settings.reconcile_interval_s)
        while not self.stopping.wait(interval):
            try:
                outcome = reconcile_once(self.context)
                if outcome and any(outcome.values()):
                    log.info("reconciled: %s", outcome)
            except (RedisError, OSError) as exc:
                log.warning("reconcile skipped, Redis unavailable: %s", exc)
            except Exception:
                log.exception("reconcile failed")


def run_worker(context: Context, burst: bool = False, reconcile_in_background: bool = True) -> int:
    """Work the match queue until stopped (or until it is empty with ``burst``)."""
    if context.queue is None:
        raise SystemExit("a worker needs Redis: set ARENA_REDIS_URL")
    set_worker_context(context)
    STOPPING.clear()
    reconciler = Reconciler(context) if reconcile_in_background and not burst else None
    if reconciler:
        reconciler.start()
    try:
        while True:
            # maintenance every minute, not RQ's ten: it is when a worker takes over the scheduler
            # (delayed refits) from one that was killed
            try:  # building the worker talks to Redis too (CLIENT SETNAME): Redis may be gone already
                worker = ArenaWorker([context.queue.queue], connection=context.queue.redis, name=_rq_name(),
                                      maintenance_interval=60)
            except (RedisConnectionError, RedisTimeoutError, ConnectionRefusedError) as exc:
                log.warning("Redis unavailable (%s); retrying in 1 s", exc)
                if _stopped_while_waiting(1.0):
                    return 0
                continue
            try:
                worker.work(burst=burst, with_scheduler=True, logging_level="WARNING")
                return 0
            except (RedisConnectionError, RedisTimeoutError, ConnectionRefusedError) as exc:
                if worker._stop_requested or worker._shutdown_requested_date is not None:
                    return 0  # asked to stop: do not start a new worker loop that would forget it
                log.warning("Redis unavailable (%s); retrying in 1 s", exc)
                try:
                    time.sleep(1)  # RQ's signal handlers are still in place: a stop raises StopRequested here
                except (StopRequested, RedisError, OSError):  # the handler may fail to reach Redis, too
                    return 0
                if worker._shutdown_requested_date is not None:
                    return 0
    finally:
        if reconciler:
            reconciler.stopping.set()
        if context.live is not None:  # the last matches' statuses: else a page never learns they ended
            context.live.flush()


class _Stop(Exception):
    pass


def _stopped_while_waiting(seconds: float) -> bool:
    """Wait, returning True at once if SIGTERM or SIGINT comes (outside RQ's loop, RQ's handlers may
    belong to a worker object that no longer runs)."""
    def stop(_signum: int, _frame: object) -> None:
        raise _Stop

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        time.sleep(seconds)
        return False
    except _Stop:
        return True
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _rq_name() -> str:
    return f"{worker_name()}:{time.monotonic_ns() % 1_000_000}"
