"""The ladder scheduler's tick on both databases (arena.services.ladder_scheduler): tables become rotations
on one deal, held back until their bots have capacity, nothing scheduled twice, a killed tick leaves
nothing, bots off the ladder owe nothing, paused ladders start nothing new."""

from __future__ import annotations

import random
import threading
from dataclasses import replace
from datetime import timedelta

import pytest
from sqlalchemy import func, select, update

from arena.services.accounts import create_account
from arena.services.ladder_scheduler import capacity, tick
from arena.services.ladder_tables import table_deals
from arena.services.ladders import ensure_ladders, pause_ladder, resume_ladder
from arena.storage.models import (
    Account,
    Bot,
    BotStatus,
    Ladder,
    Match,
    MatchSeat,
    MatchStatus,
    PausedBy,
    Rating,
    utcnow,
)

GAME = "piranha-pedro"
KEY = b"k" * 32


@pytest.fixture
def ladder_settings(settings):
    return replace(settings, ladder=True, ladder_players="3", ladder_in_flight=8, ladder_per_hour=10_000)


def _bots(context, count: int, game: str = GAME, **fields) -> list[int]:
    """``count`` bots, each of an owner of its own (two bots of one owner never share a table)."""
    with context.db.session() as session:
        start = session.scalar(select(func.count()).select_from(Bot)) or 0
        owners = [create_account(session, f"owner-{start + i}")[0] for i in range(count)]
        bots = [Bot(owner_id=owners[i].id, name=f"b{start + i}", url=f"http://127.0.0.1:{20000 + start + i}", game=game,
                    secret="s", info={}, **fields) for i in range(count)]
        session.add_all(bots)
        session.flush()
        return [b.id for b in bots]


def _tick(context, settings, seed: int = 1, workers: int = 0):
    with context.db.session() as session:
        ensure_ladders(session, settings)
        return tick(session, settings, KEY, random.Random(seed), workers=workers)


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


def _tables(matches: list[Match]) -> dict[int, list[Match]]:
    by_table: dict[int, list[Match]] = {}
    for m in matches:
        by_table.setdefault(m.table_index, []).append(m)
    return by_table


def test_a_table_is_its_rotations_each_on_its_own_deal_released_one_at_a_time_per_bot(context,
                                                                                       ladder_settings) -> None:
    _bots(context, 6)
    report = _tick(context, ladder_settings)
    matches = _matches(context)
    assert report.created and sum(report.created.values()) == 2  # 6 bots, capacity 1: two tables of three
    assert len(matches) == 6
    by_table = _tables(matches)
    assert sorted(by_table) == [0, 1]
    for rotations in by_table.values():
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
        for number, rotations in by_table.items():
            assert [m.seed for m in sorted(rotations, key=lambda m: m.rotation)] == table_deals(ladder, number, KEY)
    assert len({m.seed for m in matches}) == 6


def test_regression_a_bot_that_remembered_its_seat_read_its_opponents_hands_in_the_next_rotation(
        context, ladder_settings) -> None:
    """A red-team bot on a Pajarracos ladder read 327 of 327 opponents' starting hands: a table's rotations
    shared one deal, so the hand it held in one seat was the hand of the opponent in that seat in the next
    rotation (and live, in a rotation it played at the same time). Every match a bot plays on the ladder is now
    a deal it never sees again; ``ARENA_LADDER_DEALS=duplicate`` shares one per table, for trusted bots."""
    bots = _bots(context, 4)
    for number in range(3):
        _tick(context, ladder_settings, seed=number)
        _finish(context, [m.id for m in _matches(context) if m.status in (MatchStatus.QUEUED, MatchStatus.SCHEDULED)])
    dealt: dict[int, list[int]] = {b: [] for b in bots}
    for m in _matches(context):
        for bot_id in _seats(context, m.id):
            dealt[bot_id].append(m.seed)
    assert all(len(seeds) >= 3 for seeds in dealt.values())
    assert all(len(set(seeds)) == len(seeds) for seeds in dealt.values())  # no deal seen twice
    duplicate = replace(ladder_settings, ladder_deals="duplicate")
    _tick(context, duplicate, seed=9)
    fresh = [m for m in _matches(context) if m.status in (MatchStatus.QUEUED, MatchStatus.SCHEDULED)]
    assert fresh and all(len({m.seed for m in rotations}) == 1 for rotations in _tables(fresh).values())


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


@pytest.mark.parametrize("leaves", ["probation", "retired"])
def test_a_bot_off_the_ladder_owes_no_table_it_has_not_started(context, ladder_settings, leaves) -> None:
    bots = _bots(context, 3)
    _tick(context, ladder_settings)  # one table: its first rotation queued, two scheduled
    with context.db.session() as session:
        bot = session.get(Bot, bots[0])
        if leaves == "retired":
            bot.retired_at, bot.status = utcnow(), BotStatus.DISABLED
        else:
            bot.paused_by = PausedBy(leaves)
    report = _tick(context, ladder_settings)
    assert len(report.cancelled) == 3 and not report.created and not report.release
    assert {m.status for m in _matches(context)} == {MatchStatus.CANCELLED}


@pytest.mark.parametrize("leaves", ["paused", "disabled", "new_secret"])
def test_regression_an_owner_paused_on_seeing_an_owed_table_and_skipped_its_opponents(context, ladder_settings,
                                                                                     leaves) -> None:
    """A red-team owner: a ladder table's seats are public while it is owed, and the owner's pause cancelled
    every table its bot had not started, so pausing on seeing one and resuming after skipped opponents the
    owner would rather not meet. An owner's pause (or disabling) now lets the owed tables be played, then the
    bot rests; only what takes a bot off against its owner's will (probation, retirement, a new secret's
    wait) cancels them."""
    bots = _bots(context, 3)
    _tick(context, ladder_settings)
    with context.db.session() as session:
        if leaves == "disabled":
            session.get(Bot, bots[0]).status = BotStatus.DISABLED
        else:  # its owner's pause, or a new secret's wait (a rotation is the owner's doing too)
            session.get(Bot, bots[0]).paused_by = PausedBy.OWNER if leaves == "paused" else PausedBy.NEW_SECRET
    played: list[int] = []
    for _ in range(4):
        report = _tick(context, ladder_settings)
        assert not report.cancelled and not report.created  # owed: played; new: none
        played += [m.id for m in _matches(context) if m.status == MatchStatus.QUEUED]
        _finish(context, [m.id for m in _matches(context) if m.status == MatchStatus.QUEUED])
    assert len(played) == 3 and {m.status for m in _matches(context)} == {MatchStatus.SEALED}


@pytest.mark.parametrize("leaves", ["paused", "retired", "disabled", "probation"])
@pytest.mark.parametrize("first", [MatchStatus.SEALED, MatchStatus.RUNNING])
def test_ladder_regression_leaving_after_a_lucky_first_rotation_cancelled_its_twins(
        context, ladder_settings, leaves, first) -> None:
    """A table's rotations play one deal from every seat, so seat and deal luck cancel. A bot that saw its
    first rotation go its way (its /end says its rank; a running one shows it its hand) could pause itself
    (or retire, publish a new version...): the twins that hand the good seat to the others were cancelled,
    and the deal published with only the lucky rotation rated. Then it resumed. A started table is now
    played out whatever its bots do; only a table none of whose rotations started is cancelled."""
    bots = _bots(context, 3)
    opened = _tick(context, ladder_settings)
    with context.db.session() as session:
        session.execute(update(Match).where(Match.id.in_(opened.release)).values(status=first))
        bot = session.get(Bot, bots[0])
        if leaves == "paused":
            bot.paused_by = PausedBy.OWNER
        elif leaves == "probation":
            bot.paused_by = PausedBy.PROBATION
        elif leaves == "retired":
            bot.retired_at, bot.status = utcnow(), BotStatus.DISABLED
        else:
            bot.status = BotStatus.DISABLED
    report = _tick(context, ladder_settings)
    assert not report.cancelled and not report.created
    assert MatchStatus.CANCELLED not in {m.status for m in _matches(context)}
    _finish(context, [m.id for m in _matches(context) if m.status == MatchStatus.RUNNING])
    owed = list(report.release)
    _finish(context, report.release)
    for _ in range(3):  # the twins are still given to the workers, one at a time (capacity 1)
        released = _tick(context, ladder_settings).release
        owed += released
        _finish(context, released)
    assert len(owed) == 2 and {m.status for m in _matches(context)} == {MatchStatus.SEALED}
    assert not _tick(context, ladder_settings).created  # and no new table seats it meanwhile


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


def _settled_board(context, ladder_settings):
    """Six bots of resolved ranks, 100 Elo apart; the settings with a maintenance rate of one 3-player table
    an hour."""
    bots = _bots(context, 6)
    with context.db.session() as session:
        for rank, bot_id in enumerate(bots, start=1):
            session.add(Rating(game=GAME, players=3, bot_id=bot_id, elo=2000 - 100 * rank, elo_low=1950 - 100 * rank,
                               elo_high=2050 - 100 * rank, rank=rank, rank_low=rank, rank_high=rank, games=100,
                               provisional=False))
    return replace(ladder_settings, ladder_maintenance_per_hour=3)


def test_a_settled_board_plays_at_the_maintenance_rate(context, ladder_settings) -> None:
    slow = _settled_board(context, ladder_settings)
    report = _tick(context, slow)
    with context.db.session(readonly=True) as session:
        ladder = session.scalar(select(Ladder).where(Ladder.game == GAME))
    assert sum(report.created.values()) == 1 and report.settled[ladder.id] and ladder.settled_at is not None
    _finish(context, [m.id for m in _matches(context)])
    assert not _tick(context, slow).created  # the next one is due in an hour
    _bots(context, 1)  # a newcomer wakes it: the board is no longer settled
    woken = _tick(context, slow)
    assert woken.created and woken.placements


def test_a_newcomer_on_a_settled_board_regression_got_one_table_an_hour_after_its_first(
        context, ladder_settings) -> None:
    """Regression (h-planner's simulation against the scheduler): a settled ladder stays settled while a bot
    is placed (its rank does not reopen the others), so the tick held the newcomer to the maintenance rate
    once its first table was made: one table an hour. Now a bot being placed gets tables at the full rate,
    and only its own: the settled bots start none."""
    slow = _settled_board(context, ladder_settings)
    assert sum(_tick(context, slow).created.values()) == 1  # the maintenance table
    newcomer = _bots(context, 1)[0]
    assert _tick(context, slow).placements  # its first table, at once
    _finish(context, [m.id for m in _matches(context)])
    with context.db.session() as session:
        session.add(Rating(game=GAME, players=3, bot_id=newcomer, elo=1700, elo_low=1400, elo_high=2000, rank=4,
                           rank_low=1, rank_high=7, games=3, provisional=True))
    again = _tick(context, slow)
    with context.db.session(readonly=True) as session:
        ladder = session.scalar(select(Ladder).where(Ladder.game == GAME))
    assert again.settled[ladder.id]  # still settled: the others are not reopened
    assert sum(again.created.values()) >= 1
    fresh = [m for m in _matches(context) if m.status != MatchStatus.SEALED]
    assert fresh and all(newcomer in _seats(context, m.id) for m in fresh)


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
    assert len({m.table_index for m in matches}) == 3 and len(matches) == 9  # three tables, each bot at one
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


def _plan_of(session, query) -> str:
    """The database's plan for ``query`` (PostgreSQL with sequential scans off: can it use an index?)."""
    from datetime import datetime

    connection = session.connection()
    compiled = query.compile(dialect=connection.dialect, compile_kwargs={"render_postcompile": True})
    if connection.dialect.name == "sqlite":  # as SQLAlchemy stores datetimes there
        values = [compiled.params[name] for name in compiled.positiontup]
        values = [v.strftime("%Y-%m-%d %H:%M:%S.%f") if isinstance(v, datetime) else v for v in values]
        return " | ".join(str(row[-1]) for row in connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {compiled}",
                                                                             tuple(values)))
    connection.exec_driver_sql("SET LOCAL enable_seqscan = off")
    return " | ".join(row[0] for row in connection.exec_driver_sql(f"EXPLAIN {compiled}", compiled.params))


def test_the_tick_counts_the_last_hour_from_an_index_not_a_scan_of_every_match(context, ladder_settings) -> None:
    """Regression: the per-hour budgets counted the last hour's ladder matches by scanning every stored
    match (``matches.created_at`` had no index). Revision 0009 indexes (ladder_id, created_at); the count
    reads one range of it per ladder, and what was created before the hour does not count."""
    from datetime import timedelta

    from arena.services.ladder_scheduler import _created_since, created_since_query

    _bots(context, 6)
    first = _tick(context, ladder_settings)
    with context.db.session() as session:
        ladder_ids = list(session.scalars(select(Ladder.id)))
        old = utcnow() - timedelta(hours=2)
        session.execute(update(Match).where(Match.id.in_(first.release)).values(created_at=old))
        since = utcnow() - timedelta(hours=1)
        assert sum(_created_since(session, ladder_ids, since).values()) == 6 - len(first.release)
        plan = _plan_of(session, created_since_query(ladder_ids, since))
    assert "ix_matches_ladder_created" in plan, plan
    assert "SCAN matches" not in plan and "Seq Scan" not in plan, plan


def test_the_tick_index_migrates_down_and_up(context) -> None:
    from alembic import command
    from sqlalchemy import inspect

    from arena.storage.db import alembic_config

    def indexes() -> set[str]:
        return {ix["name"] for ix in inspect(context.db.engine).get_indexes("matches")}

    assert "ix_matches_ladder_created" in indexes()
    config = alembic_config(context.db.url)
    for target, present in (("0008_find", False), ("head", True)):
        with context.db.engine.begin() as connection:
            config.attributes["connection"] = connection
            (command.downgrade if target != "head" else command.upgrade)(config, target)
        context.db.engine.dispose()  # a fresh inspector: no cached reflection
        assert ("ix_matches_ladder_created" in indexes()) is present


def _declare(context, bot_ids: list[int], capacity: int) -> None:
    with context.db.session() as session:
        for bot in session.scalars(select(Bot).where(Bot.id.in_(bot_ids))):
            bot.info = {"capacity": capacity}


def test_a_newcomer_plays_at_once_beside_opponents_who_declared_room_and_a_spare_worker(
        context, ladder_settings) -> None:
    """Regression (bench.ladder_e2e, issue 17's 2 s): a newcomer's first match waited for its opponents'
    match to end (capacity 1), then for a worker (every worker busy with owed matches): 2-6 s under load.
    Bots that declare ``capacity`` in ``GET /`` (the SDK's do: 2) may play it beside their current match,
    and the ladder's owed matches leave one worker free for it."""
    old = _bots(context, 3)
    _declare(context, old, 2)
    first = _tick(context, ladder_settings, workers=2)
    assert len(first.release) == 1  # 2 workers, 1 spare: owed matches play one at a time
    with context.db.session() as session:  # they are rated now: the newcomer is the only one without a match
        for bot_id in old:
            session.add(Rating(game=GAME, players=3, bot_id=bot_id, elo=1500, elo_low=1300, elo_high=1700, rank=1,
                               rank_low=1, rank_high=3, games=3, provisional=True))
    newcomer = _bots(context, 1)[0]
    placed = _tick(context, ladder_settings, workers=2)
    assert len(placed.release) == 1 and newcomer in _seats(context, placed.release[0])
    assert placed.front == set(placed.release)  # ahead of whatever waits in the queue
    again = _tick(context, ladder_settings, workers=2)
    assert not again.release  # both workers busy now: nothing more until a match ends


def test_release_room_keeps_spare_workers_for_newcomers(ladder_settings) -> None:
    from arena.services.ladder_scheduler import release_room

    assert release_room(ladder_settings, 0) == (8, 8)  # workers unknown: the in-flight budget alone
    assert release_room(ladder_settings, 3) == (2, 3)
    assert release_room(ladder_settings, 1) == (1, 1)  # one worker: nothing to keep spare
    assert release_room(replace(ladder_settings, ladder_spare_workers=0), 3) == (3, 3)
    assert release_room(replace(ladder_settings, ladder_in_flight=2), 20) == (2, 2)


def _tick_instructions(tmp_path, stored: int) -> int:
    """SQLite virtual-machine instructions (in hundreds) one tick runs on 12 rated bots and ``stored``
    finished ladder matches."""
    from arena.storage.db import Database
    from bench.ladder_tick import fill

    db = Database(f"sqlite:///{tmp_path / f'tick{stored}.db'}")
    db.migrate()
    fill(db, 12, stored, random.Random(1))
    counted = [0]

    def count() -> int:
        counted[0] += 1
        return 0

    session = db.sessions()
    try:
        session.connection().connection.driver_connection.set_progress_handler(count, 100)
        now = utcnow()
        report = tick(session, _tick_settings(), KEY, random.Random(1), now, now - timedelta(seconds=10), workers=3)
        assert report.tables
    finally:
        session.rollback()
        session.close()
        db.dispose()
    return counted[0]


def test_a_tick_costs_the_same_however_many_matches_were_played_before(tmp_path) -> None:
    """Regression: a tick read every seat of every waiting bot (had it ever played?), and the last hour's
    matches and the ones published lately by scans, so its cost grew with every match ever played (4x from
    0 to 100,000 stored, ``bench/ladder_tick.py``). Counted in SQLite's instructions, not time; both
    histories hold more than the ``RECENT_TABLES`` the planner is told about."""
    some, many = _tick_instructions(tmp_path, 900), _tick_instructions(tmp_path, 3600)  # both past RECENT_TABLES
    assert many < 1.25 * some, (some, many)


def _tick_settings():
    from arena.config import load_settings

    return replace(load_settings(), ladder=True, ladder_players="3", ladder_per_hour=3600)


def test_the_scheduler_never_seats_two_bots_of_one_owner_but_the_arenas_own_may_share_a_table(
        context, ladder_settings) -> None:
    """The planner's owner rule from the database: an account's bots are kept apart, an organizer's (the
    arena's own sparring bots, as the demo's) are not."""
    with context.db.session() as session:
        mallory, _ = create_account(session, "mallory")
        house, _ = create_account(session, "house", admin=True)
        spies = [Bot(owner_id=mallory.id, name=f"spy-{i}", url=f"http://127.0.0.1:1/s{i}", game=GAME, secret="s",
                     info={}) for i in range(3)]
        session.add_all(spies)
        session.flush()
    assert _tick(context, ladder_settings).tables == 0  # three bots, one owner: no table
    with context.db.session() as session:
        session.add_all([Bot(owner_id=house.id, name=f"house-{i}", url=f"http://127.0.0.1:1/h{i}", game=GAME,
                             secret="s", info={}) for i in range(2)])
    report = _tick(context, ladder_settings)
    assert report.tables == 1
    seated = _seats(context, _matches(context)[0].id)
    with context.db.session(readonly=True) as session:
        owners = [session.get(Bot, b).owner_id for b in seated]
    assert owners.count(mallory.id) == 1 and owners.count(house.id) == 2


def test_regression_a_ladder_of_one_owners_bots_took_the_arenas_last_table_every_tick(context, ladder_settings) -> None:
    """A review: a ladder whose bots all belong to one owner asked for tables by its free seats, never formed
    one (the owner rule), and, never having played, won ``share_slots``' spare room every tick: with room for
    one table in flight the other ladder got one table, then nothing. And its page said "placing and settling:
    full rate" for ever; it now says it waits for bots of other owners."""
    from arena.services.ladders import ladder_state

    settings = replace(ladder_settings, ladder_in_flight=1)
    with context.db.session() as session:
        mallory, _ = create_account(session, "mallory")
        session.add_all([Bot(owner_id=mallory.id, name=f"m{i}", url=f"http://127.0.0.1:1/m{i}", game=GAME,
                             secret="s", info={}) for i in range(4)])
    others = _bots(context, 3, game="pajarracos")
    with context.db.session() as session:
        for i, bot_id in enumerate(others):  # rated and provisional: the ladder wants tables at its full rate
            session.add(Rating(game="pajarracos", players=3, bot_id=bot_id, elo=1500.0 + i, elo_low=1000.0 + i,
                               elo_high=2000.0 + i, rank_low=1, rank_high=3, games=30, provisional=True))
    made = []
    for n in range(5):
        made.append(_tick(context, settings, seed=n).tables)
        _finish(context, [m.id for m in _matches(context, "pajarracos")
                          if m.status in (MatchStatus.QUEUED, MatchStatus.SCHEDULED)])
    assert made == [1] * 5, made
    assert _matches(context) == []  # mallory's bots never at one table
    with context.db.session(readonly=True) as session:
        states = {ladder.game: ladder_state(session, ladder) for ladder in session.scalars(select(Ladder))}
    assert states[GAME]["waiting"] and states[GAME]["bots"] == 4 and states[GAME]["owners"] == 1
    assert not states["pajarracos"]["waiting"]
    from arena.services.bot_status import status

    with context.db.session(readonly=True) as session:  # and each of the bots' pages says why
        reason = status(session, session.scalar(select(Bot).where(Bot.name == "m0"))).reason
        other = status(session, session.get(Bot, others[0])).reason
    assert reason == ("waiting for its first rated match: a table needs bots of 3 different owners, and the ladder "
                      "has bots of 1 (two bots of one owner never share a table)")
    assert "owners" not in other


def test_regression_two_accounts_bots_at_one_url_sat_at_one_table(context, ladder_settings) -> None:
    """A second red-team review: the owner rule compared accounts only, so two accounts' bots at the same URL
    (one server behind two seats) sat together at every rotation. Bots at one address never share a table."""
    with context.db.session() as session:
        for name, url in (("evil-a", "http://127.0.0.1:5402"), ("evil-b", "http://127.0.0.1:5402"),
                          ("victim", "http://127.0.0.1:5403")):
            owner, _ = create_account(session, f"account-{name}")
            session.add(Bot(owner_id=owner.id, name=name, url=url, game=GAME, secret="s", info={}))
    assert _tick(context, ladder_settings).tables == 0  # three bots, two servers: no table of three
    _bots(context, 1)
    assert _tick(context, ladder_settings).tables == 1
    with context.db.session(readonly=True) as session:
        seated = [session.get(Bot, b).name for b in _seats(context, _matches(context)[0].id)]
    assert not {"evil-a", "evil-b"} <= set(seated)
