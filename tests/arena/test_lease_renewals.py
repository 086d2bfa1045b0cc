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
