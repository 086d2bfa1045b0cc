"""The watchdog (referee/watchdog.py): cuts at each deadline, holding none of its locks while it cuts.

Regression, "the fence and the watchdog waited for each other for good" (found by a helper's review):
the watchdog called each target's ``abort`` under its own condition lock; ``Fence.abort`` takes the
fence's lock, and ``Fence.move`` (a lease renewal) holds that lock while it arms the watchdog again. Met at
the same moment, both threads stopped for good, and no call of any match the worker played was cut again."""

from __future__ import annotations

import threading
import time

from referee.fence import Fence
from referee.watchdog import Watchdog


def _wait_until(done, seconds: float) -> None:  # type: ignore[no-untyped-def]
    deadline = time.perf_counter() + seconds
    while not done() and time.perf_counter() < deadline:
        time.sleep(0.01)


def _armed_and_waited_for(watchdog: Watchdog) -> Recorder:
    """A target armed 50 ms ahead, waited for (2 s at most): whether the watchdog still cuts."""
    later = Recorder()
    watchdog.arm(time.perf_counter() + 0.05, later)
    _wait_until(lambda: later.at, 2.0)
    return later


class Recorder:
    def __init__(self) -> None:
        self.at: list[float] = []

    def abort(self) -> None:
        self.at.append(time.perf_counter())


def test_a_target_is_cut_at_its_deadline_and_a_disarmed_one_never() -> None:
    watchdog = Watchdog()
    fired, spared = Recorder(), Recorder()
    try:
        t0 = time.perf_counter()
        watchdog.arm(t0 + 0.1, fired)
        Watchdog.disarm(watchdog.arm(t0 + 0.05, spared))
        time.sleep(0.4)
    finally:
        watchdog.close()
    assert len(fired.at) == 1 and 0.1 <= fired.at[0] - t0 < 0.28
    assert spared.at == []


def test_a_cut_may_wait_on_a_thread_that_arms_the_watchdog() -> None:
    """The target's abort waits for another thread to arm the watchdog (as the fence's waits for a renewal
    that holds its lock while arming): that arm must go through while the cut is under way."""
    watchdog = Watchdog()
    armed = threading.Event()
    unblocked: list[bool] = []

    class WaitsForAnArm:
        def abort(self) -> None:
            threading.Thread(target=lambda: (watchdog.arm(time.perf_counter() + 60, Recorder()), armed.set()),
                             daemon=True).start()
            unblocked.append(armed.wait(2.0))  # (bounded: before the fix, it waited for the watchdog's lock)

    try:
        watchdog.arm(time.perf_counter() + 0.05, WaitsForAnArm())
        _wait_until(lambda: unblocked, 3.0)
        later = _armed_and_waited_for(watchdog)
    finally:
        watchdog.close()
    assert unblocked == [True]
    assert len(later.at) == 1  # and the watchdog still cuts


def test_a_fence_moved_while_the_watchdog_crosses_it_stops_neither() -> None:
    watchdog = Watchdog()
    mover_done = threading.Event()
    moved_first: list[bool] = []

    class PausedFence(Fence):
        def abort(self) -> None:  # the watchdog crossing the fence, paused while a renewal moves it
            threading.Thread(target=lambda: (self.move(time.perf_counter() + 60), mover_done.set()),
                             daemon=True).start()
            moved_first.append(mover_done.wait(1.0))  # the renewal goes through while the cut is under way
            super().abort()

    fence = PausedFence(time.perf_counter() + 0.05, watchdog)
    try:
        # (asked first: deadlocked, any call on the watchdog from this thread would hang the suite)
        assert mover_done.wait(3.0), "the renewal and the watchdog wait for each other"
        later = _armed_and_waited_for(watchdog)
    finally:
        if mover_done.is_set():
            watchdog.close()
    assert moved_first == [True]
    assert fence.crossed
    assert len(later.at) == 1  # and the watchdog still cuts
