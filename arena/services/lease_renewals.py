"""One thread per process that renews the leases of the matches in play, each a third of its lease after
its claim or its last renewal (``matches._LeaseKeeper``). A thread started and joined per match cost 0.6 ms of
wall and 0.27 ms of CPU on the project's machine (docs/benchmarks.md, issue 19 goal 4); a worker plays one
match at a time, so the one thread is idle between renewals, whatever the number of matches."""

from __future__ import annotations

import logging
import threading
import time
from typing import Protocol

log = logging.getLogger("arena.matches")


class Renewable(Protocol):
    match_id: int
    lease_s: int
    lost: bool

    def renew(self) -> bool: ...


class Renewals:
    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._due: dict[Renewable, float] = {}  # a lease in play -> when to renew it (time.monotonic())
        self._renewing: Renewable | None = None
        self._thread: threading.Thread | None = None
        self._waking_at = float("inf")  # when the thread wakes by itself (inf: it waits to be told)

    def add(self, lease: Renewable) -> None:
        """Renew ``lease`` every third of it from now on, until ``remove`` or until it is lost."""
        with self._changed:
            due = self._due[lease] = time.monotonic() + lease.lease_s / 3
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="arena-lease-renewals", daemon=True)
                self._thread.start()
            if due < self._waking_at:  # (else the thread wakes in time by itself: no hand-off per match)
                self._changed.notify_all()

    def remove(self, lease: Renewable) -> None:
        """No more renewals of ``lease``; returns once none is under way (as joining its own thread did)."""
        with self._changed:  # (the thread is not woken: when it wakes, it finds the lease gone)
            self._due.pop(lease, None)
            while self._renewing is lease:
                self._changed.wait()

    def _run(self) -> None:
        while True:
            with self._changed:
                lease = self._next_due()
                self._renewing = lease
            try:
                lease.renew()
            except Exception as exc:  # the database away for a moment: the next beat tries again
                log.warning("could not renew the lease of match %s: %s", lease.match_id, type(exc).__name__)
            finally:
                with self._changed:
                    self._renewing = None
                    if lease in self._due:
                        if lease.lost:
                            del self._due[lease]
                        else:
                            self._due[lease] = time.monotonic() + lease.lease_s / 3
                    self._changed.notify_all()

    def _next_due(self) -> Renewable:
        """Wait (holding ``_changed``'s lock between waits) until a lease is due; return it."""
        while True:
            if not self._due:
                self._waking_at = float("inf")
                self._changed.wait()
                continue
            lease, due = min(self._due.items(), key=lambda item: item[1])
            wait_s = due - time.monotonic()
            if wait_s <= 0:
                self._waking_at = float("-inf")  # (renewing: it looks at every lease again after, unasked)
                return lease
            self._waking_at = due
            self._changed.wait(wait_s)


RENEWALS = Renewals()  # the process's one renewing thread, started with its first match
