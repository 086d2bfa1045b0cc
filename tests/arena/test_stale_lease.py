"""A worker whose lease ran out while it was cut off (a network partition) must neither record the match
another worker claimed again, nor go on calling the bots for it (found by tests/cluster/)."""

from __future__ import annotations

import threading
import time
from typing import Any

from sqlalchemy import select, update

from arena.services.matches import LeaseLost, _LeaseKeeper, claim, record, run_match
from arena.storage.models import Match, MatchStatus
from arena.storage.replays import decompress
from referee.games import GAMES
from referee.runner import BotSpec, play_match
from sample_bots.sdk import Bot, start_in_thread
from tests.arena import service_harness as h


def _one_match(context, servers) -> int:
    bots = h.register_bots(context, servers, "piranha-pedro")
    h.start_tournament(context, {"game": "piranha-pedro", "bots": bots, "seats": 2, "seed": 1})
    with context.db.session() as session:
        return session.scalar(select(Match.id).order_by(Match.id).limit(1))


def test_stale_lease_regression_a_partitioned_worker_overwrote_the_match_claimed_again_elsewhere(context) -> None:
    """Bug: ``record`` stored a match whenever its row was running or queued, so a worker that came back
    from a partition after its lease had run out recorded its stale play over the claim of the worker
    that was playing the match again. Recording now needs the claim (worker and attempt) to still hold."""
    with h.slow_bots(2, 0) as servers:
        match_id = _one_match(context, servers)
        specs = [BotSpec(url=s.url, secret=s.bot.secret) for s in servers]
        with context.db.session() as session:
            assert claim(session, match_id, "cut-off", lease_s=-1)  # its lease runs out while it is away
        stale = play_match("piranha-pedro", specs, 1, match_id=f"m{match_id}a1")
        with context.db.session() as session:
            assert claim(session, match_id, "w2", lease_s=30)  # played again elsewhere: attempt 2
        assert not record(context.db, match_id, stale, claim=("cut-off", 1))  # the stale worker comes back
        with context.db.session(readonly=True) as session:
            assert session.get(Match, match_id).status == MatchStatus.RUNNING  # still w2's to record
        fresh = play_match("piranha-pedro", specs, 1, match_id=f"m{match_id}a2")
        assert record(context.db, match_id, fresh, claim=("w2", 2))
    with context.db.session(readonly=True) as session:
        match = session.get(Match, match_id)
        assert match.status == MatchStatus.SEALED  # its twin of the deal is still to play
        assert decompress(match.replay_gz)["match_id"] == f"m{match_id}a2"


def test_stale_lease_regression_the_same_worker_name_with_an_older_attempt_cannot_record(context) -> None:
    with h.slow_bots(2, 0) as servers:
        match_id = _one_match(context, servers)
        specs = [BotSpec(url=s.url, secret=s.bot.secret) for s in servers]
        for _ in range(2):  # the same worker process claims it twice (its first job was retried)
            with context.db.session() as session:
                assert claim(session, match_id, "w1", lease_s=-1)
        stale = play_match("piranha-pedro", specs, 1, match_id=f"m{match_id}a1")
        assert not record(context.db, match_id, stale, claim=("w1", 1))


def test_lost_lease_regression_a_worker_went_on_calling_the_bots_for_a_match_claimed_elsewhere(context) -> None:
    """Bug: a worker whose match was claimed again by another (its lease had run out while it was cut
    off) played on to the end, sending the bots turns of a match another worker was playing or had
    recorded. It now stops at the next step once a renewal finds the claim gone."""
    calls: list[tuple[float, str]] = []
    stolen_at: list[float] = []

    def act(request: dict[str, Any]) -> Any:
        calls.append((time.monotonic(), request["match_id"]))
        time.sleep(0.2)
        return request["legal_actions"][0]

    servers = [start_in_thread(Bot(name=f"slow-{i}", act=act, games=sorted(GAMES))) for i in range(2)]
    try:
        match_id = _one_match(context, servers)

        def take_over() -> None:  # another worker claims it, as if this one's lease had run out
            while not any(name == f"m{match_id}a1" for _t, name in calls):  # not the health checks' calls
                time.sleep(0.01)
            with context.db.session() as session:
                session.execute(update(Match).where(Match.id == match_id)
                                .values(worker="w2", attempts=Match.attempts + 1))
            stolen_at.append(time.monotonic())

        thief = threading.Thread(target=take_over)
        thief.start()
        outcome = run_match(context.db, context.settings, match_id, "w1")
        thief.join()
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
    assert stolen_at and outcome == "lost"
    renewal = context.settings.match_lease_s / 3
    last_call = max(t for t, name in calls if name == f"m{match_id}a1")
    assert last_call < stolen_at[0] + renewal + 1.0  # at most one renewal and one step (0.2 s) later
    with context.db.session(readonly=True) as session:
        match = session.get(Match, match_id)
        assert (match.status, match.worker) == (MatchStatus.RUNNING, "w2")  # left to the worker that holds it


class _UnreachableDatabase:
    def session(self, readonly: bool = False):  # type: ignore[no-untyped-def]
        raise ConnectionError("the database is on the other side of a partition")


def test_lost_lease_regression_a_worker_cut_off_from_the_database_stops_before_its_lease_can_run_out() -> None:
    keeper = _LeaseKeeper(_UnreachableDatabase(), 1, "w1", 1, lease_s=1, claimed_at=time.perf_counter())  # type: ignore[arg-type]
    with keeper:
        keeper.on_step(1, [])  # still surely ours
        time.sleep(0.95)  # 0.9 s: the lease less its tenth for clocks
        try:
            keeper.on_step(2, [])
        except LeaseLost as exc:
            assert "could not renew" in str(exc)
        else:
            raise AssertionError("played on without knowing it still held the match")


def test_lost_lease_regression_a_worker_that_cannot_renew_stops_in_time_and_frees_the_match(context,
                                                                                              monkeypatch) -> None:
    """The database unreachable from the worker alone (every renewal fails): it stops calling the bots
    before its lease can run out, and once the database answers again it hands the match back."""
    calls: list[tuple[float, str]] = []

    def act(request: dict[str, Any]) -> Any:
        calls.append((time.monotonic(), request["match_id"]))
        time.sleep(0.3)
        return request["legal_actions"][0]

    def cut_off(self) -> bool:  # type: ignore[no-untyped-def]
        raise ConnectionError("the database is on the other side of a partition")

    servers = [start_in_thread(Bot(name=f"slow-{i}", act=act, games=sorted(GAMES))) for i in range(2)]
    try:
        match_id = _one_match(context, servers)
        monkeypatch.setattr(_LeaseKeeper, "renew", cut_off)
        started = time.monotonic()
        assert run_match(context.db, context.settings, match_id, "w1") == "lost"
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
    lease = context.settings.match_lease_s
    assert max(t for t, name in calls if name == f"m{match_id}a1") < started + lease  # none once it may be over
    with context.db.session(readonly=True) as session:
        match = session.get(Match, match_id)
        assert (match.status, match.attempts) == (MatchStatus.QUEUED, 1)  # free for the next claim at once


class _HeldUpSink:
    """A live sink whose first event waits until ``release`` is set: the worker held up between its claim
    and the first request to a bot, as a cut link holds it up announcing the match."""

    def __init__(self) -> None:
        self.first, self.release = threading.Event(), threading.Event()

    def publish(self, topic: str, kind: str, data: dict[str, Any], keep: bool = False) -> None:
        if not self.first.is_set():
            self.first.set()
            self.release.wait(20)

    def keep(self, topic: str, kind: str, data: dict[str, Any]) -> None:
        pass


def test_lost_lease_regression_a_worker_held_up_before_its_first_request_sent_start_after_the_record(
        context) -> None:
    """Found by the cluster test (worker partition): cut off right after its claim, a worker waited on
    the link while announcing the match; healed after the match had been played elsewhere and recorded,
    it sent the bots ``/start`` and turn 1 before the first step's lease check stopped it. The lease is
    now checked before ``/start`` and before every step."""
    from dataclasses import replace

    calls: list[str] = []
    bots = [start_in_thread(Bot(name=f"b{i}", act=lambda r: r["legal_actions"][0], games=sorted(GAMES),
                                on_start=lambda r: calls.append(r["match_id"]))) for i in range(2)]
    sink = _HeldUpSink()
    settings = replace(context.settings, match_lease_s=1)
    try:
        match_id = _one_match(context, bots)
        outcome: list[str] = []
        worker = threading.Thread(target=lambda: outcome.append(
            run_match(context.db, settings, match_id, "w1", live=sink)))
        worker.start()
        assert sink.first.wait(10)
        time.sleep(1.1)  # its lease runs out while it is held up; another worker claims the match
        with context.db.session() as session:
            assert claim(session, match_id, "w2", lease_s=30)
        sink.release.set()
        worker.join(20)
    finally:
        for server in bots:
            server.shutdown()
            server.server_close()
    assert outcome == ["lost"]
    assert f"m{match_id}a1" not in calls  # the bots never heard of the stale attempt


def test_lost_lease_regression_an_end_call_longer_than_the_lease_was_not_cut_when_the_lease_could_end(
        context, monkeypatch) -> None:
    """Found by the cluster test (worker partition): a worker cut off from every host finished its match
    before its lease could run out and sent ``/end`` (5 s budget, 4 s lease). The request sat in the
    kernel until the link healed and reached the bot after another worker had replayed and recorded the
    match. Every call in flight is now cut, unsent bytes dropped, once the lease is no longer confirmed;
    here the renewals fail and a bot takes 3 s over ``/end``."""
    from dataclasses import replace

    ends: list[str] = []

    def slow_end(request: dict[str, Any]) -> None:
        if request["match_id"].startswith("m"):  # not the health check's matches
            ends.append(request["match_id"])
            time.sleep(3)

    def cut_off(self) -> bool:  # type: ignore[no-untyped-def]
        raise ConnectionError("the database is on the other side of a partition")

    bots = [start_in_thread(Bot(name=f"b{i}", act=lambda r: r["legal_actions"][0], games=sorted(GAMES),
                                on_end=slow_end)) for i in range(2)]
    settings = replace(context.settings, match_lease_s=2)
    try:
        match_id = _one_match(context, bots)
        monkeypatch.setattr(_LeaseKeeper, "renew", cut_off)
        started = time.perf_counter()
        outcome = run_match(context.db, settings, match_id, "w1")
        took = time.perf_counter() - started
    finally:
        for server in bots:
            server.shutdown()
            server.server_close()
    assert ends == [f"m{match_id}a1"] * 2  # the match was played to its end within the lease
    assert outcome == "lost"
    assert took < 2.5, f"the /end calls ran on {took:.1f} s, past the 1.8 s the lease was sure for"
    with context.db.session(readonly=True) as session:
        match = session.get(Match, match_id)
        assert (match.status, match.attempts) == (MatchStatus.QUEUED, 1)  # not recorded: played again
