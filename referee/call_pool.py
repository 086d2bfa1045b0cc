"""The threads that carry a simultaneous step's calls to bots, kept from match to match.

A ``ThreadPoolExecutor`` per match starts its threads anew for every match, and a bounded shared one
could make a call wait in a queue behind others, which would eat into that bot's deadline. This pool
never queues: a call goes to an idle thread when there is one and to a new thread otherwise; a thread
that finishes waits (up to ``IDLE_S``) for the next call before it ends.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any

IDLE_S = 60.0  # how long an idle thread waits for work before it ends
MAX_IDLE = 64  # threads kept waiting at most; more idle ones end at once


class _Worker:
    def __init__(self, pool: CallPool) -> None:
        self.pool = pool
        self.ready = threading.Semaphore(0)
        self.job: tuple[Future[Any], Callable[..., Any], tuple[Any, ...]] | None = None
        threading.Thread(target=self._run, name="arena-call", daemon=True).start()

    def give(self, future: Future[Any], fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self.job = (future, fn, args)
        self.ready.release()

    def _run(self) -> None:
        while True:
            if not self.ready.acquire(timeout=IDLE_S):
                if self.pool._retire(self):
                    return
                self.ready.acquire()  # a call was handed over as the wait ended: take it
            job, self.job = self.job, None
            assert job is not None
            future, fn, args = job
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(fn(*args))
                except BaseException as exc:  # handed to whoever waits on the future
                    future.set_exception(exc)
            del job, future, fn, args
            if not self.pool._rest(self):
                return


class CallPool(Executor):
    """An executor that runs every call at once, on a thread kept from earlier calls when one is idle."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        if kwargs:
            raise TypeError("CallPool.submit takes positional arguments only")
        future: Future[Any] = Future()
        with self._lock:
            worker = self._idle.pop() if self._idle else None
        if worker is None:
            worker = _Worker(self)
        worker.give(future, fn, args)
        return future

    def _rest(self, worker: _Worker) -> bool:
        with self._lock:
            if len(self._idle) >= MAX_IDLE:
                return False
            self._idle.append(worker)
            return True

    def _retire(self, worker: _Worker) -> bool:
        """True when an idle worker may end: nobody picked it while its wait timed out."""
        with self._lock:
            if worker in self._idle:
                self._idle.remove(worker)
                return True
            return False


_shared: CallPool | None = None
_shared_lock = threading.Lock()


def shared_pool() -> CallPool:
    """The process's pool (created on first use)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = CallPool()
        return _shared
