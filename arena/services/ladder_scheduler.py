"""One tick of the ladder scheduler: the database in, new tables and released matches out.

The database is the truth about what is scheduled, played and owed. A chosen table becomes one match per
seat rotation, each on its own deal by default (``ladder_tables``: seeds from the deal key, as tournaments
draw theirs), all stored at once as ``SCHEDULED``: owed, but not yet given to the workers. A tick
*releases* a scheduled match (``QUEUED``, then enqueued by the caller after the commit) only while each of
its bots has room under its capacity (default 1: a table's rotations then run one after the other) and the
ladder and the arena have room in flight. Two bots of one owner never share a table (``ladder_planner``).
A bot is offered to the planner for a new table only while it sits at fewer
open tables than its capacity, so what is owed stays bounded.

A tick is one transaction that first locks every ladder row (PostgreSQL ``FOR UPDATE``; SQLite writers
hold the write lock from ``BEGIN``): two schedulers that both believe they are the active one (a Redis
restart cut a lock short) still take turns, each reading what the other committed, so nothing is
scheduled twice and no capacity is exceeded. A scheduler killed mid-tick rolls the whole tick back;
one killed after the commit but before enqueuing leaves ``QUEUED`` rows the reconciler enqueues.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from dataclasses import replace as with_fields
from datetime import datetime, timedelta

from sqlalchemy import Select, func, select, update
from sqlalchemy.orm import Session

from arena.config import Settings
from arena.domain.ladder_planner import (
    Entrant,
    Table,
    choose_tables,
    ladder_settled,
    pair_key,
    placing,
    share_slots,
    table_room,
)
from arena.services import ladder_tables, probation
from arena.services.bot_owner import effective_capacity as capacity
from arena.services.ladder_tables import Load, aware
from arena.services.ladders import effective_settings, table_owners
from arena.storage.models import (
    Bot,
    BotStatus,
    Ladder,
    LadderStatus,
    Match,
    MatchSeat,
    MatchStatus,
    PausedBy,
    Rating,
    utcnow,
)

UNRATED_HALF_WIDTH = 700.0  # Elo either side of the prior for a bot with no fitted rating yet
RECENT_TABLES = 200  # the ladder's latest tables whose pairings the planner is told about


@dataclass
class TickReport:
    """What a tick did: ``release`` is what the caller enqueues after the commit (``front``: ahead of the
    queue, a newcomer's first match)."""

    created: dict[int, int] = field(default_factory=dict)  # ladder id -> tables created
    release: list[int] = field(default_factory=list)
    front: set[int] = field(default_factory=set)
    cancelled: list[int] = field(default_factory=list)
    settled: dict[int, bool] = field(default_factory=dict)
    placements: list[tuple[int, Table]] = field(default_factory=list)  # (ladder id, table) placing a bot
    probation: list[probation.Paused] = field(default_factory=list)  # bots paused by this tick's review

    @property
    def tables(self) -> int:
        return sum(self.created.values())


def eligible(bot: Bot) -> bool:
    """On the ladder: active, not paused (by its owner or by probation), not a retired version."""
    return bot.status == BotStatus.ACTIVE and bot.paused_by is None and bot.retired_at is None


def owes_nothing(bot: Bot) -> bool:
    """Off the ladder in a way that cancels the tables it owes and has not started: retired, or on probation.
    What its owner does otherwise (a pause, disabling, a new secret and its wait) does not: the tables it owes
    are played, then it rests. Owed tables are public with their seats, so pausing (or asking for a new secret)
    on seeing one and resuming after let an owner skip the opponents it would rather not meet (red-team
    findings). A new bot's wait owes nothing anyway."""
    return bot.retired_at is not None or bot.paused_by == PausedBy.PROBATION


def tick(session: Session, settings: Settings, deal_key: bytes, rng: random.Random,
         now: datetime | None = None, review_since: datetime | None = None, workers: int = 0) -> TickReport:
    """Put on probation the bots whose ladder matches published since ``review_since`` fault too often,
    cancel what a bot off the ladder still owes, plan new tables, release what capacity allows.

    ``workers``: the match workers listening (0: unknown). The ladder's owed matches then leave
    ``ARENA_LADDER_SPARE_WORKERS`` of them free, so a newcomer's first match finds a worker at once
    instead of waiting for a match to end; only newcomers' first matches may take the spare ones."""
    now = now or utcnow()
    report = TickReport()
    ladders = list(session.scalars(select(Ladder).order_by(Ladder.id).with_for_update()))
    if not ladders:
        return report
    if review_since is not None:
        report.probation = probation.review(session, _played_since(session, ladders, review_since), settings, now)
    games = {ladder.game for ladder in ladders}
    bots = {bot.id: bot for bot in session.scalars(select(Bot).where(Bot.game.in_(games)))}
    report.cancelled = ladder_tables.cancel_off_ladder(session, {b for b, bot in bots.items() if owes_nothing(bot)})
    load = ladder_tables.load(session)
    _plan(session, settings, deal_key, rng, now, ladders, bots, load, report)
    _release(session, settings, ladders, bots, load, report, workers)
    return report


def _played_since(session: Session, ladders: list[Ladder], since: datetime) -> list[int]:
    """Bots with a ladder match published since ``since`` (the ones whose fault rate may have moved): by
    board, so ``ix_matches_board_finished`` finds them without a scan of every match."""
    bots: set[int] = set()
    for game, players in {(ladder.game, ladder.players) for ladder in ladders}:  # one index range per board
        published = select(Match.id).where(Match.game == game, Match.num_players == players,
                                           Match.status == MatchStatus.FINISHED, Match.finished_at >= since,
                                           Match.ladder_id.is_not(None))
        bots.update(session.scalars(select(MatchSeat.bot_id).where(MatchSeat.match_id.in_(published))))
    return sorted(bots)


def _entrants(session: Session, settings: Settings, ladder: Ladder, bots: dict[int, Bot],
              load: Load) -> list[Entrant]:
    on = [bot for bot in bots.values() if bot.game == ladder.game and eligible(bot)]
    ratings = {r.bot_id: r for r in session.scalars(select(Rating).where(Rating.game == ladder.game,
                                                                         Rating.players == ladder.players))}
    owners = table_owners(session, on)  # the arena's own bots may share a table; one owner's, or one server's, not
    entrants = []
    for bot in sorted(on, key=lambda b: b.id):
        free = max(0, capacity(bot, settings) - load.tables[bot.id])
        owner = owners[bot.id]
        rating = ratings.get(bot.id)
        if rating is None:
            entrants.append(Entrant(bot.id, 1500.0, 1500.0 - UNRATED_HALF_WIDTH, 1500.0 + UNRATED_HALF_WIDTH,
                                    1, len(on), 0, True, free, owner=owner))
        else:
            entrants.append(Entrant(bot.id, rating.elo, rating.elo_low, rating.elo_high, rating.rank_low,
                                    rating.rank_high, rating.games, bool(rating.provisional), free, owner=owner))
    return entrants


def _recent(session: Session, ladder: Ladder) -> dict[tuple[int, int], int]:
    """How often each pair met at the ladder's latest tables (rotation 0 seats everyone of a table)."""
    first = select(Match.id).where(Match.ladder_id == ladder.id, Match.rotation == 0) \
        .order_by(Match.id.desc()).limit(RECENT_TABLES).subquery()
    seats: dict[int, list[int]] = defaultdict(list)
    for match_id, bot_id in session.execute(select(MatchSeat.match_id, MatchSeat.bot_id)
                                            .where(MatchSeat.match_id.in_(select(first.c.id)))).all():
        seats[match_id].append(bot_id)
    met: Counter[tuple[int, int]] = Counter()
    for table in seats.values():
        for i, a in enumerate(table):
            for b in table[i + 1:]:
                met[pair_key(a, b)] += 1
    return dict(met)


def created_since_query(ladder_ids: list[int], since: datetime) -> Select[tuple[int | None, int]]:
    """The ladders' matches created since ``since``: one range of ``ix_matches_ladder_created`` per ladder
    (revision 0009), so a tick costs what the last hour created, not every match ever stored."""
    return (select(Match.ladder_id, func.count())
            .where(Match.ladder_id.in_(ladder_ids), Match.created_at >= since).group_by(Match.ladder_id))


def _created_since(session: Session, ladder_ids: list[int], since: datetime) -> dict[int, int]:
    return {ladder_id: count for ladder_id, count in session.execute(created_since_query(ladder_ids, since)).all()
            if ladder_id is not None}


def _plan(session: Session, settings: Settings, deal_key: bytes, rng: random.Random, now: datetime,
          ladders: list[Ladder], bots: dict[int, Bot], load: Load, report: TickReport) -> None:
    """Split the arena's room for new tables fairly between the running ladders, then let the planner fill
    each ladder's share."""
    last_hour = _created_since(session, [ladder.id for ladder in ladders], now - timedelta(hours=1))
    hour_room = settings.ladder_per_hour - sum(last_hour.values())
    demand: dict[int, int] = {}
    weights: dict[int, float] = {}
    pools: dict[int, list[Entrant]] = {}
    was: dict[int, bool] = {}
    for ladder in ladders:
        entrants = _entrants(session, settings, ladder, bots, load)
        was_settled = ladder.settled_at is not None  # hysteresis: noise alone does not reopen a settled board
        settled = len(entrants) >= ladder.players and ladder_settled(entrants, was_settled)
        was[ladder.id] = was_settled
        report.settled[ladder.id] = settled
        if settled and ladder.settled_at is None:
            ladder.settled_at = now
        elif not settled:
            ladder.settled_at = None
        if ladder.status != LadderStatus.RUNNING:
            continue
        if hour_room > 0:
            entrants = _place_newcomers(session, settings, deal_key, rng, now, ladder, entrants, bots, load, report)
        tuned = effective_settings(ladder, settings)
        want = min(table_room(entrants, ladder.players),  # the owner rule counted: no table it cannot form
                   max(0, tuned["per_hour"] - last_hour.get(ladder.id, 0)) // ladder.players,
                   max(0, hour_room) // ladder.players)
        # a settled board plays at the maintenance rate, evenly spaced; while a bot is being placed on it,
        # its tables go at the full rate (the planner lets only the bots being placed start tables)
        if settled and want and not placing(entrants):
            spacing = timedelta(hours=ladder.players / max(tuned["maintenance_per_hour"], 1e-9))
            due = ladder.last_scheduled_at is None or aware(ladder.last_scheduled_at) + spacing <= now
            want = 1 if due and tuned["maintenance_per_hour"] > 0 else 0
        if want > 0:
            demand[ladder.id], weights[ladder.id], pools[ladder.id] = want, float(tuned["weight"]), entrants
    if not demand:
        return
    budget = max(0, settings.ladder_in_flight - load.open_tables)
    shares = share_slots(demand, budget, played={k: float(v) for k, v in last_hour.items()}, weights=weights)
    by_id = {ladder.id: ladder for ladder in ladders}
    for ladder_id, slots in shares.items():
        if slots <= 0:
            continue
        ladder = by_id[ladder_id]
        pool = [e for e in pools[ladder_id] if load.tables[e.bot_id] < capacity(bots[e.bot_id], settings)]
        for table in choose_tables(pool, ladder.players, slots, _recent(session, ladder), rng,
                                   was_settled=was[ladder_id]):
            ladder_tables.store_table(session, settings, ladder, table, deal_key, now)
            for bot_id in table.bot_ids:
                load.tables[bot_id] += 1
            load.open_tables += 1
            report.created[ladder_id] = report.created.get(ladder_id, 0) + 1
            if table.reason.startswith("placement"):
                report.placements.append((ladder_id, table))


def _place_newcomers(session: Session, settings: Settings, deal_key: bytes, rng: random.Random, now: datetime,
                     ladder: Ladder, entrants: list[Entrant], bots: dict[int, Bot], load: Load,
                     report: TickReport) -> list[Entrant]:
    """A bot with no match yet is seated at once, even when every other bot is busy: its opponents may
    take one table beyond their capacity (their matches in flight stay within it; the newcomer's rotation
    is released first, so their other table waits one match). Returns the entrants with their new load."""
    newcomers = {e.bot_id for e in entrants if e.matches == 0 and e.free_slots > 0 and not load.tables[e.bot_id]}
    if not newcomers:
        return entrants
    pool = [with_fields(e, provisional=e.bot_id in newcomers,
                        free_slots=e.free_slots if e.bot_id in newcomers
                        else max(0, capacity(bots[e.bot_id], settings) + 1 - load.tables[e.bot_id]))
            for e in entrants]
    for table in choose_tables(pool, ladder.players, len(newcomers), _recent(session, ladder), rng):
        if not table.reason.startswith("placement"):
            continue  # only the newcomers' tables may use the extra seat
        ladder_tables.store_table(session, settings, ladder, table, deal_key, now)
        for bot_id in table.bot_ids:
            load.tables[bot_id] += 1
        load.open_tables += 1
        report.created[ladder.id] = report.created.get(ladder.id, 0) + 1
        report.placements.append((ladder.id, table))
    return [with_fields(e, free_slots=max(0, capacity(bots[e.bot_id], settings) - load.tables[e.bot_id]))
            for e in entrants]


def release_room(settings: Settings, workers: int) -> tuple[int, int]:
    """Ladder matches that may be queued or running at once: (any match, a newcomer's first match). With
    ``workers`` known, the others leave the spare workers free for newcomers (one worker: no spare)."""
    if workers <= 0:
        return settings.ladder_in_flight, settings.ladder_in_flight
    placing = min(settings.ladder_in_flight, workers)
    return min(placing, max(1, workers - settings.ladder_spare_workers)), placing


def _ever_released(session: Session, bot_ids: set[int]) -> set[int]:
    """The bots among ``bot_ids`` that ever had a match given to the workers: one probe of
    ``ix_match_seats_bot_match`` per bot that stops at its first such match (reading every seat of every
    waiting bot made each tick cost what the arena ever played)."""
    if not bot_ids:
        return set()
    released = select(MatchSeat.match_id).join(Match, Match.id == MatchSeat.match_id).where(
        MatchSeat.bot_id == Bot.id, Match.status != MatchStatus.SCHEDULED)
    return set(session.scalars(select(Bot.id).where(Bot.id.in_(bot_ids), released.exists())))


def _release(session: Session, settings: Settings, ladders: list[Ladder], bots: dict[int, Bot], load: Load,
             report: TickReport, workers: int = 0) -> None:
    """Scheduled matches, newcomers' first ones first, then oldest first, whose bots all have room and whose
    ladder and arena have room."""
    limits = {ladder.id: effective_settings(ladder, settings)["in_flight"] for ladder in ladders}
    room, placing_room = release_room(settings, workers)
    total = sum(load.ladder_active.values())
    rows = session.execute(
        select(Match.id, Match.ladder_id, MatchSeat.bot_id).join(MatchSeat, MatchSeat.match_id == Match.id)
        .where(Match.status == MatchStatus.SCHEDULED).order_by(Match.id, MatchSeat.seat)).all()
    seats: dict[int, list[int]] = defaultdict(list)
    ladder_of: dict[int, int] = {}
    for match_id, ladder_id, bot_id in rows:
        seats[match_id].append(bot_id)
        ladder_of[match_id] = ladder_id
    waiting = {b for seated in seats.values() for b in seated}
    played = _ever_released(session, waiting)
    # a newcomer's first match (a bot that never had one released) goes first, then the oldest owed
    newcomer_first = sorted(seats, key=lambda m: (all(b in played for b in seats[m]), m))
    for match_id in newcomer_first:
        seated = seats[match_id]
        first = any(b not in played for b in seated)
        if total >= (placing_room if first else room):
            continue
        ladder_id = ladder_of[match_id]
        if load.ladder_active[ladder_id] >= limits.get(ladder_id, settings.ladder_in_flight):
            continue
        if any(b in bots and load.active[b] >= capacity(bots[b], settings) for b in seated):
            continue
        done = session.execute(update(Match).where(Match.id == match_id, Match.status == MatchStatus.SCHEDULED)
                               .values(status=MatchStatus.QUEUED).execution_options(synchronize_session=False))
        if done.rowcount != 1:
            continue
        for bot_id in seated:
            load.active[bot_id] += 1
        load.ladder_active[ladder_id] += 1
        total += 1
        report.release.append(match_id)
        if first:
            report.front.add(match_id)
            played.update(seated)
