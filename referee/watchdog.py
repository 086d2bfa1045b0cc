"""One thread that cuts connections whose deadline has passed.

Lets a call run in the caller's own thread (no hand-off to a worker, which costs two context switches)
while still ending by its deadline: ``arm`` before the request, ``disarm`` after it.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from typing import Protocol

log = logging.getLogger("referee.watchdog")


class Abortable(Protocol):
    def abort(self) -> None: ...


class Watchdog:
    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, list[Abortable | None]]] = []
        self._ids = itertools.count()
        self._thread: threading.Thread | None = None
        self._closed = False

    def arm(self, deadline: float, target: Abortable) -> list[Abortable | None]:
        """Abort ``target`` at ``deadline`` (a ``time.perf_counter()`` value) unless disarmed first."""
        entry: list[Abortable | None] = [target]
        with self._cond:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="arena-watchdog", daemon=True)
                self._thread.start()
            heapq.heappush(self._heap, (deadline, next(self._ids), entry))
            if self._heap[0][2] is entry:
                self._cond.notify()
        return entry

    @staticmethod
    def disarm(entry: list[Abortable | None]) -> None:
        entry[0] = None

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify()

    def _run(self) -> None:
        while True:
            due: list[Abortable] = []
            with self._cond:
                if self._closed:
                    return
                now = time.perf_counter()
                while self._heap and (self._heap[0][2][0] is None or self._heap[0][0] <= now):
                    _deadline, _id, entry = heapq.heappop(self._heap)
                    if entry[0] is not None:
                        due.append(entry[0])
                if not due:
                    self._cond.wait(self._heap[0][0] - now if self._heap else None)
                    continue
            # Cut with no lock of the watchdog's held: a target's abort takes its own lock, and its owner may
            # hold that lock while it arms (``Fence.move`` during a lease renewal). Cut under the condition,
            # the two waited for each other for good, and no call of any match of the worker was cut again.
            for target in due:
                try:
                    target.abort()
                except Exception:  # the one thread that enforces every deadline must outlive any target
                    log.exception("a watchdog cut failed")


_shared: Watchdog | None = None
_shared_lock = threading.Lock()


def shared_watchdog() -> Watchdog:
    """The process's watchdog, for matches: one thread for every match a worker plays, instead of a
    thread started (and ended) per match."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = Watchdog()
        return _shared
