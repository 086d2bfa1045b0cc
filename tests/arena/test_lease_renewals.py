"""The process's one lease-renewing thread (arena.services.lease_renewals), with fake leases."""

from __future__ import annotations

import threading
import time

from arena.services.lease_renewals import Renewals


class FakeLease:
    def __init__(self, match_id: int, lease_s: float, lose_after: int | None = None,
                 hold: threading.Event | None = None) -> None:
        self.match_id, self.lease_s, self.lost = match_id, lease_s, False
        self.renewed: list[float] = []
        self.lose_after, self.hold = lose_after, hold
        self.in_renewal = threading.Event()

    def renew(self) -> bool:
        self.in_renewal.set()
        if self.hold is not None:
            self.hold.wait(10)
        self.renewed.append(time.monotonic())
        if self.lose_after is not None and len(self.renewed) >= self.lose_after:
            self.lost = True
        return not self.lost


def _wait(condition, timeout_s: float = 10) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_each_lease_is_renewed_a_third_of_it_apart_until_removed() -> None:
    renewals = Renewals()
    short, long = FakeLease(1, 0.15), FakeLease(2, 30.0)
    added = time.monotonic()
    renewals.add(short)
    renewals.add(long)
    _wait(lambda: len(short.renewed) >= 3)
    assert short.renewed[0] - added >= 0.05 - 0.005  # not before a third of the lease
    assert all(b - a >= 0.05 - 0.005 for a, b in zip(short.renewed, short.renewed[1:], strict=False))
    assert long.renewed == []  # its third (10 s) has not come: one lease's schedule is not the other's
    renewals.remove(short)
    count = len(short.renewed)
    time.sleep(0.2)
    assert len(short.renewed) == count
    renewals.remove(long)


def test_a_lost_lease_is_renewed_no_more() -> None:
    renewals = Renewals()
    lease = FakeLease(3, 0.06, lose_after=2)
    renewals.add(lease)
    _wait(lambda: len(lease.renewed) >= 2)
    time.sleep(0.15)
    assert len(lease.renewed) == 2
    renewals.remove(lease)


def test_removing_a_lease_waits_for_its_renewal_under_way() -> None:
    """As joining the keeper's own thread did: once a match's keeper is left, no renewal of its row is
    running (it would race the recording transaction for the same row)."""
    renewals = Renewals()
    hold = threading.Event()
    lease = FakeLease(4, 0.03, hold=hold)
    renewals.add(lease)
    assert lease.in_renewal.wait(5)
    removed = threading.Event()
    remover = threading.Thread(target=lambda: (renewals.remove(lease), removed.set()))
    remover.start()
    assert not removed.wait(0.2)  # the renewal is still under way
    hold.set()
    assert removed.wait(5)
    remover.join()
    assert len(lease.renewed) == 1


class _CountingCondition(threading.Condition):
    """A condition that counts how often its waiters were told to wake."""

    def __init__(self) -> None:
        super().__init__()
        self.told = 0

    def notify_all(self) -> None:
        self.told += 1
        super().notify_all()


def test_a_batch_of_matches_does_not_wake_the_thread_each_regression_two_hand_offs_a_match() -> None:
    """Each match's ``add`` and ``remove`` woke the thread, which only found that nothing was due: about ten
    futex calls a match between it and the referee's thread (strace on bench.worker_loop). A lease due later
    than the thread's next wake-up, or one removed, now leaves the thread asleep."""
    renewals = Renewals()
    renewals._changed = counting = _CountingCondition()
    first = FakeLease(10, 30.0)
    renewals.add(first)  # (the thread starts and must learn of it)
    _wait(lambda: renewals._waking_at < float("inf"))  # asleep until the first lease's third
    told = counting.told
    leases = [FakeLease(11 + n, 30.0) for n in range(50)]
    for lease in leases:  # a worker's matches, one after the other
        renewals.add(lease)
        renewals.remove(lease)
    assert counting.told == told
    renewals.remove(first)
    assert counting.told == told


def test_a_lease_due_before_the_threads_next_wake_up_is_renewed_in_time() -> None:
    """The thread sleeping until a long lease's third is woken for a shorter lease added after it."""
    renewals = Renewals()
    long, short = FakeLease(20, 30.0), FakeLease(21, 0.15)
    renewals.add(long)
    time.sleep(0.1)  # (the thread asleep until the long lease's third)
    added = time.monotonic()
    renewals.add(short)
    _wait(lambda: len(short.renewed) >= 2, timeout_s=2)
    assert short.renewed[0] - added < 1.0
    renewals.remove(short)
    renewals.remove(long)
    assert long.renewed == []
