"""A time after which no request of a match may reach its bots: the claim on the match may be over.

A worker plays a match while its lease holds. Checking the lease before each batch of requests is not
enough: a request written while the lease held can sit unacknowledged in the kernel while the link is
cut, and reach the bot when it heals, after another worker has replayed and recorded the match (the
cluster test's worker partition caught an ``/end`` doing so: its 5 s budget outlasted the 4 s lease).
So the owner of the match puts a fence at the end of what it knows of its claim and moves it forward
as each renewal is confirmed. Should the time come first, the watchdog cuts every connection of the
match at once (reset on close: the kernel drops what it has not delivered), every later call fails
before a byte is written, and ``play_match`` raises ``FenceCrossed`` instead of returning a replay.
"""

from __future__ import annotations

import threading

from referee.bot_transport import ConnectionTracker
from referee.watchdog import Abortable, Watchdog, shared_watchdog


class FenceCrossed(Exception):
    """The match's claim may be over: every call was cut, and the match is not to be recorded."""


class Fence:
    def __init__(self, until: float, watchdog: Watchdog | None = None) -> None:
        """``until``: a ``time.perf_counter()`` value."""
        self._lock = threading.Lock()
        self._trackers: list[ConnectionTracker] = []
        self.crossed = False  # before arming: a time already past has the watchdog cross it at once
        self._watchdog = watchdog or shared_watchdog()
        self._entry: list[Abortable | None] = self._watchdog.arm(until, self)

    def guard(self, tracker: ConnectionTracker) -> None:
        """Cut this connection with the others when the fence is crossed (at once if it already is)."""
        with self._lock:
            self._trackers.append(tracker)
            crossed = self.crossed
        if crossed:
            tracker.shut()

    def move(self, until: float) -> None:
        """The claim is confirmed until ``until``. Moved at the very moment the watchdog fires, the fence
        may still be crossed: the match then stops although it need not have, never the other way."""
        with self._lock:
            if self.crossed:
                return
            Watchdog.disarm(self._entry)
            self._entry = self._watchdog.arm(until, self)

    def abort(self) -> None:
        """Cross the fence now (the watchdog at the time, or the owner on learning its claim is gone)."""
        with self._lock:
            self.crossed = True
            trackers = list(self._trackers)
        for tracker in trackers:
            tracker.shut()

    def close(self) -> None:
        """The match is over: the fence has nothing left to guard."""
        with self._lock:
            Watchdog.disarm(self._entry)

    def hold(self) -> None:
        """Raise ``FenceCrossed`` once the fence has been crossed."""
        if self.crossed:
            raise FenceCrossed("the match's claim could not be confirmed in time: every call to its bots was cut")
