"""The ladder scheduler's tick on both databases (arena.services.ladder_scheduler): tables become rotations
on one deal, held back until their bots have capacity, nothing scheduled twice, a killed tick leaves
nothing, bots off the ladder owe nothing, paused ladders start nothing new."""

from __future__ import annotations

import random
import threading
from dataclasses import replace

import pytest
from sqlalchemy import func, select, update

from arena.services.accounts import create_account
from arena.services.ladder_scheduler import capacity, ladder_seed, tick
from arena.services.ladders import ensure_ladders, pause_ladder, resume_ladder
from arena.storage.models import Account, Bot, Ladder, Match, MatchSeat, MatchStatus, PausedBy, Rating, utcnow

GAME = "piranha-pedro"
KEY = b"k" * 32


@pytest.fixture
def ladder_settings(settings):
    return replace(settings, ladder=True, ladder_players="3", ladder_in_flight=8, ladder_per_hour=10_000)


def _bots(context, count: int, game: str = GAME, **fields) -> list[int]:
    with context.db.session() as session:
        owner = session.scalar(select(Account).where(Account.name == "owner"))
        if owner is None:
            owner, _ = create_account(session, "owner")
        start = session.scalar(select(func.count()).select_from(Bot)) or 0
        bots = [Bot(owner_id=owner.id, name=f"b{start + i}", url=f"http://127.0.0.1:1/{i}", game=game, secret="s",
                    info={}, **fields) for i in range(count)]
        session.add_all(bots)
        session.flush()
        return [b.id for b in bots]


def _tick(context, settings, seed: int = 1):
    with context.db.session() as session:
        ensure_ladders(session, settings)
        return tick(session, settings, KEY, random.Random(seed))


def _matches(context, ladder_game: str = GAME) -> list[Match]:
    with context.db.session(readonly=True) as session:
        return list(session.scalars(select(Match).where(Match.ladder_id.is_not(None), Match.game == ladder_game)
                                    .order_by(Match.id)))


def _seats(context, match_id: int) -> list[int]:
    with context.db.session(readonly=True) as session:
        return list(session.scalars(select(MatchSeat.bot_id).where(MatchSeat.match_id == match_id)
                                    .order_by(MatchSeat.seat)))


def _finish(context, ids: list[int]) -> None:
    with context.db.session() as session:
        session.execute(update(Match).where(Match.id.in_(ids)).values(status=MatchStatus.SEALED, finished_at=utcnow()))


def test_a_table_is_its_rotations_on_one_deal_released_one_at_a_time_per_bot(context, ladder_settings) -> None:
    _bots(context, 6)
    report = _tick(context, ladder_settings)
    matches = _matches(context)
    assert report.created and sum(report.created.values()) == 2  # 6 bots, capacity 1: two tables of three
    assert len(matches) == 6
    by_seed: dict[int, list[Match]] = {}
    for m in matches:
        by_seed.setdefault(m.seed, []).append(m)
    assert len(by_seed) == 2
    for rotations in by_seed.values():
        assert sorted(m.rotation for m in rotations) == [0, 1, 2]
        seats = [_seats(context, m.id) for m in sorted(rotations, key=lambda m: m.rotation)]
        assert all(sorted(s) == sorted(seats[0]) for s in seats)
        assert [s[0] for s in seats] == seats[0]  # every bot opens once: the seats rotate
    # capacity 1: one rotation of each table given to the workers, the rest owed
    assert len(report.release) == 2
    assert sorted(m.status for m in matches).count(MatchStatus.SCHEDULED) == 4
    with context.db.session(readonly=True) as session:
        ladder = session.scalar(select(Ladder).where(Ladder.game == GAME, Ladder.players == 3))
        assert ladder.tables == 2
        assert {m.seed for m in matches} == {ladder_seed(ladder, 0, KEY), ladder_seed(ladder, 1, KEY)}


def test_ticking_again_schedules_nothing_twice_and_releases_the_next_rotation_when_one_ends(
        context, ladder_settings) -> None:
    _bots(context, 6)
    first = _tick(context, ladder_settings)
    again = _tick(context, ladder_settings, seed=2)
    assert not again.created and not again.release  # every bot sits at a table and is playing
    assert len(_matches(context)) == 6
    _finish(context, first.release)
    nxt = _tick(context, ladder_settings, seed=3)
    assert not nxt.created and len(nxt.release) == 2
    assert {_matches_by_id(context)[i].rotation for i in nxt.release} == {1}


def _matches_by_id(context) -> dict[int, Match]:
    return {m.id: m for m in _matches(context)}


def test_capacity_bounds_open_tables_and_matches_in_flight(context, ladder_settings) -> None:
    bots = _bots(context, 3, capacity=2)
    report = _tick(context, ladder_settings)
    assert sum(report.created.values()) == 2  # every bot at two tables
    assert len(report.release) == 2  # and playing two matches at once, no more
    with context.db.session(readonly=True) as session:
        bot = session.get(Bot, bots[0])
        assert capacity(bot, ladder_settings) == 2
        bot.info = {"capacity": 1}  # a bot may declare less than its owner allows
        assert capacity(bot, ladder_settings) == 1
        bot.capacity = 99
        bot.info = {}
        assert capacity(bot, ladder_settings) == ladder_settings.ladder_max_capacity


def test_a_killed_tick_leaves_nothing(context, ladder_settings, monkeypatch) -> None:
    from arena.services import ladder_scheduler

    _bots(context, 3)
    monkeypatch.setattr(ladder_scheduler, "_release", lambda *a, **k: (_ for _ in ()).throw(SystemExit("killed")))
    with pytest.raises(SystemExit):
        _tick(context, ladder_settings)
    assert _matches(context) == []
    with context.db.session(readonly=True) as session:
        assert session.scalar(select(func.sum(Ladder.tables))) in (0, None)
    monkeypatch.undo()
    assert sum(_tick(context, ladder_settings).created.values()) == 1


def test_a_bot_off_the_ladder_owes_nothing(context, ladder_settings) -> None:
    bots = _bots(context, 3)
    first = _tick(context, ladder_settings)
    with context.db.session() as session:  # played (publication itself: the integration test)
        session.execute(update(Match).where(Match.id.in_(first.release)).values(status=MatchStatus.FINISHED))
    with context.db.session() as session:
        session.get(Bot, bots[0]).paused_by = PausedBy.OWNER
    report = _tick(context, ladder_settings)
    assert len(report.cancelled) == 2 and not report.created
    statuses = sorted(m.status for m in _matches(context))
    assert statuses == [MatchStatus.CANCELLED, MatchStatus.CANCELLED, MatchStatus.FINISHED]


def test_a_paused_ladder_starts_no_table_but_plays_what_is_owed(context, ladder_settings) -> None:
    _bots(context, 3)
    first = _tick(context, ladder_settings)
    with context.db.session() as session:
        organizer, _ = create_account(session, "org", admin=True)
        ladder_id = session.scalar(select(Ladder.id).where(Ladder.game == GAME))
        pause_ladder(session, organizer, ladder_id, "maintenance window")
    _finish(context, first.release)
    owed = _tick(context, ladder_settings)
    assert len(owed.release) == 1 and not owed.created
    _finish(context, owed.release)
    _finish(context, _tick(context, ladder_settings).release)
    assert not _tick(context, ladder_settings).created  # paused: the table is done, nothing new
    with context.db.session() as session:
        resume_ladder(session, session.scalar(select(Account).where(Account.name == "org")), ladder_id)
    assert _tick(context, ladder_settings).created


def test_a_settled_board_plays_at_the_maintenance_rate(context, ladder_settings) -> None:
    bots = _bots(context, 6)
    with context.db.session() as session:
        for rank, bot_id in enumerate(bots, start=1):
            session.add(Rating(game=GAME, players=3, bot_id=bot_id, elo=2000 - 100 * rank, elo_low=1950 - 100 * rank,
                               elo_high=2050 - 100 * rank, rank=rank, rank_low=rank, rank_high=rank, games=100,
                               provisional=False))
    slow = replace(ladder_settings, ladder_maintenance_per_hour=3)  # one 3-player table an hour
    report = _tick(context, slow)
    with context.db.session(readonly=True) as session:
        ladder = session.scalar(select(Ladder).where(Ladder.game == GAME))
    assert sum(report.created.values()) == 1 and report.settled[ladder.id] and ladder.settled_at is not None
    _finish(context, [m.id for m in _matches(context)])
    assert not _tick(context, slow).created  # the next one is due in an hour
    _bots(context, 1)  # a newcomer wakes it: the board is no longer settled
    woken = _tick(context, slow)
    assert woken.created and woken.placements


def test_two_schedulers_at_once_never_exceed_capacity(context, ladder_settings) -> None:
    _bots(context, 9)
    errors: list[BaseException] = []

    def run(seed: int) -> None:
        try:
            for i in range(5):
                _tick(context, ladder_settings, seed=seed * 10 + i)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(n,)) for n in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    matches = _matches(context)
    assert len({m.seed for m in matches}) == 3 and len(matches) == 9  # three tables, each bot at one
    in_flight: dict[int, int] = {}
    for m in matches:
        if m.status == MatchStatus.QUEUED:
            for bot_id in _seats(context, m.id):
                in_flight[bot_id] = in_flight.get(bot_id, 0) + 1
    assert max(in_flight.values()) == 1


def test_ladders_follow_the_configured_player_counts(context, settings) -> None:
    with context.db.session() as session:
        ladders = ensure_ladders(session, replace(settings, ladder_players="3,6"))
        again = ensure_ladders(session, replace(settings, ladder_players="3,6"))
    boards = {(lad.game, lad.players) for lad in ladders}
    assert ("pajarracos", 3) in boards and ("pajarracos", 6) in boards and ("piranha-pedro", 6) in boards
    assert len(again) == len(ladders)


def test_a_newcomer_is_seated_at_once_when_every_other_bot_is_busy(context, ladder_settings) -> None:
    """Regression (bench.ladder_e2e): a bot submitted while every other bot sat at a table waited for whole
    tables to end, 10-30 s. Its opponents now take one table beyond their capacity, and its rotation is
    released before their owed ones, so it waits for one match at most."""
    _bots(context, 3)
    first = _tick(context, ladder_settings)
    with context.db.session() as session:  # they are rated now: the newcomer is the only one without a match
        for bot_id in session.scalars(select(Bot.id)):
            session.add(Rating(game=GAME, players=3, bot_id=bot_id, elo=1500, elo_low=1300, elo_high=1700, rank=1,
                               rank_low=1, rank_high=3, games=3, provisional=True))
    newcomer = _bots(context, 1)[0]
    placed = _tick(context, ladder_settings)
    assert placed.placements and newcomer in placed.placements[0][1].bot_ids
    assert not placed.release  # its opponents are still playing: capacity holds for matches in flight
    _finish(context, first.release)
    nxt = _tick(context, ladder_settings)
    assert len(nxt.release) == 1 and newcomer in _seats(context, nxt.release[0])


def test_reconcile_requeues_released_ladder_matches_a_flushed_redis_lost(queued_context) -> None:
    """Redis restarted without persistence: the queue is empty, the database still says what was released.
    ``arena reconcile`` enqueues the released (queued) and abandoned (lease expired) ladder matches, never
    the ones still owed (scheduled: the scheduler releases those when their bots have room)."""
    from datetime import timedelta

    from arena.services.reconcile import reconcile

    context = queued_context
    settings = replace(context.settings, ladder=True, ladder_players="3")
    _bots(context, 6)
    first = _tick(context, settings)
    with context.db.session() as session:
        session.execute(update(Match).where(Match.id == first.release[0])
                        .values(status=MatchStatus.RUNNING, lease_until=utcnow() - timedelta(seconds=5)))
    context.queue.redis.flushdb()  # as a restart without persistence does
    with context.db.session() as session:
        outcome = reconcile(session, context.queue)
    assert outcome["ladder_requeued"] == 1 and outcome["ladder_expired_leases"] == 1
    assert all(context.queue.is_live(match_id) for match_id in first.release)
    owed = [m.id for m in _matches(context) if m.status == MatchStatus.SCHEDULED]
    assert owed and not any(context.queue.is_live(match_id) for match_id in owed)
    with context.db.session() as session:  # enqueued already: a second pass adds nothing
        assert reconcile(session, context.queue)["ladder_requeued"] == 0
