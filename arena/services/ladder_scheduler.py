"""One tick of the ladder scheduler: the database in, new tables and released matches out.

The database is the truth about what is scheduled, played and owed. A chosen table becomes one match per
seat rotation on one deal (one seed from the deal key, as tournaments draw theirs), all stored at once as
``SCHEDULED``: owed, but not yet given to the workers. A tick *releases* a scheduled match (``QUEUED``,
then enqueued by the caller after the commit) only while each of its bots has room under its capacity
(default 1: so a table's rotations never run at the same time for the same bot) and the ladder and the
arena have room in flight. A bot is offered to the planner for a new table only while it sits at fewer
open tables than its capacity, so what is owed stays bounded.

A tick is one transaction that first locks every ladder row (PostgreSQL ``FOR UPDATE``; SQLite writers
hold the write lock from ``BEGIN``): two schedulers that both believe they are the active one (a Redis
restart cut a lock short) still take turns, each reading what the other committed, so nothing is
scheduled twice and no capacity is exceeded. A scheduler killed mid-tick rolls the whole tick back;
one killed after the commit but before enqueuing leaves ``QUEUED`` rows the reconciler enqueues.
"""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from dataclasses import replace as with_fields
from datetime import UTC, datetime, timedelta

from sqlalchemy import and_, func, or_, select, update
from sqlalchemy.orm import Session

from arena.config import Settings
from arena.domain.ladder_planner import (
    Entrant,
    Table,
    choose_tables,
    ladder_settled,
    pair_key,
    settled_width,
    share_slots,
)
from arena.domain.schedules import table_seeds
from arena.services import probation
from arena.services.bot_owner import effective_capacity as capacity
from arena.services.ladders import effective_settings
from arena.services.publication import close_deal
from arena.storage.models import Bot, BotStatus, Ladder, LadderStatus, Match, MatchSeat, MatchStatus, Rating, utcnow

UNRATED_HALF_WIDTH = 700.0  # Elo either side of the prior for a bot with no fitted rating yet
RECENT_TABLES = 200  # the ladder's latest tables whose pairings the planner is told about
ACTIVE = (MatchStatus.QUEUED, MatchStatus.RUNNING)
OWED = (MatchStatus.SCHEDULED, *ACTIVE)


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


@dataclass
class Load:
    """Every bot's open ladder tables and matches in flight, and the arena's totals, as the tick goes."""

    tables: Counter[int] = field(default_factory=Counter)  # bot -> open ladder tables
    active: Counter[int] = field(default_factory=Counter)  # bot -> matches queued (ladder) or running (any)
    ladder_active: Counter[int] = field(default_factory=Counter)  # ladder -> matches queued or running
    open_tables: int = 0


def eligible(bot: Bot) -> bool:
    """On the ladder: active, not paused (by its owner or by probation), not a retired version."""
    return bot.status == BotStatus.ACTIVE and bot.paused_by is None and bot.retired_at is None


def tick(session: Session, settings: Settings, deal_key: bytes, rng: random.Random,
         now: datetime | None = None, review_since: datetime | None = None) -> TickReport:
    """Put on probation the bots whose ladder matches published since ``review_since`` fault too often,
    cancel what a bot off the ladder still owes, plan new tables, release what capacity allows."""
    now = now or utcnow()
    report = TickReport()
    ladders = list(session.scalars(select(Ladder).order_by(Ladder.id).with_for_update()))
    if not ladders:
        return report
    if review_since is not None:
        report.probation = probation.review(session, _played_since(session, review_since), settings, now)
    games = {ladder.game for ladder in ladders}
    bots = {bot.id: bot for bot in session.scalars(select(Bot).where(Bot.game.in_(games)))}
    report.cancelled = _cancel_off_ladder(session, {b for b, bot in bots.items() if not eligible(bot)})
    load = _load(session)
    _plan(session, settings, deal_key, rng, now, ladders, bots, load, report)
    _release(session, settings, ladders, bots, load, report)
    return report


def _played_since(session: Session, since: datetime) -> list[int]:
    """Bots with a ladder match published since ``since`` (the ones whose fault rate may have moved)."""
    return list(session.scalars(select(MatchSeat.bot_id).join(Match, Match.id == MatchSeat.match_id)
                                .where(Match.ladder_id.is_not(None), Match.status == MatchStatus.FINISHED,
                                       Match.finished_at >= since).distinct()))


def _cancel_off_ladder(session: Session, off: set[int]) -> list[int]:
    """Ladder matches not yet started that seat a bot no longer on the ladder are cancelled (its deal then
    publishes the rotations already played)."""
    if not off:
        return []
    ids = list(session.scalars(
        select(Match.id).join(MatchSeat, MatchSeat.match_id == Match.id)
        .where(Match.ladder_id.is_not(None), Match.status.in_([MatchStatus.SCHEDULED, MatchStatus.QUEUED]),
               MatchSeat.bot_id.in_(off)).distinct().order_by(Match.id)))
    cancelled = []
    for match_id in ids:
        done = session.execute(update(Match).where(Match.id == match_id,
                                                   Match.status.in_([MatchStatus.SCHEDULED, MatchStatus.QUEUED]))
                               .values(status=MatchStatus.CANCELLED, finished_at=utcnow())
                               .execution_options(synchronize_session=False))
        if done.rowcount == 1:
            close_deal(session, match_id)
            cancelled.append(match_id)
    return cancelled


def _load(session: Session) -> Load:
    load = Load()
    rows = session.execute(
        select(MatchSeat.bot_id, Match.ladder_id, Match.seed, Match.status)
        .join(Match, Match.id == MatchSeat.match_id)
        .where(or_(and_(Match.ladder_id.is_not(None), Match.status.in_(OWED)), Match.status == MatchStatus.RUNNING))
    ).all()
    tables: dict[tuple[int, int], set[int]] = defaultdict(set)
    for bot_id, ladder_id, seed, status in rows:
        if status in ACTIVE:
            load.active[bot_id] += 1
        if ladder_id is not None:
            tables[(ladder_id, seed)].add(bot_id)
    for bots in tables.values():
        for bot_id in bots:
            load.tables[bot_id] += 1
    load.open_tables = len(tables)
    load.ladder_active.update(dict(session.execute(
        select(Match.ladder_id, func.count()).where(Match.ladder_id.is_not(None), Match.status.in_(ACTIVE))
        .group_by(Match.ladder_id)).all()))
    return load


def _entrants(session: Session, settings: Settings, ladder: Ladder, bots: dict[int, Bot],
              load: Load) -> list[Entrant]:
    on = [bot for bot in bots.values() if bot.game == ladder.game and eligible(bot)]
    ratings = {r.bot_id: r for r in session.scalars(select(Rating).where(Rating.game == ladder.game,
                                                                         Rating.players == ladder.players))}
    entrants = []
    for bot in sorted(on, key=lambda b: b.id):
        free = max(0, capacity(bot, settings) - load.tables[bot.id])
        rating = ratings.get(bot.id)
        if rating is None:
            entrants.append(Entrant(bot.id, 1500.0, 1500.0 - UNRATED_HALF_WIDTH, 1500.0 + UNRATED_HALF_WIDTH,
                                    1, len(on), 0, True, free))
        else:
            entrants.append(Entrant(bot.id, rating.elo, rating.elo_low, rating.elo_high, rating.rank_low,
                                    rating.rank_high, rating.games, bool(rating.provisional), free))
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


def _created_since(session: Session, since: datetime) -> dict[int, int]:
    return dict(session.execute(select(Match.ladder_id, func.count())
                                .where(Match.ladder_id.is_not(None), Match.created_at >= since)
                                .group_by(Match.ladder_id)).all())


def _plan(session: Session, settings: Settings, deal_key: bytes, rng: random.Random, now: datetime,
          ladders: list[Ladder], bots: dict[int, Bot], load: Load, report: TickReport) -> None:
    """Split the arena's room for new tables fairly between the running ladders, then let the planner fill
    each ladder's share."""
    last_hour = _created_since(session, now - timedelta(hours=1))
    hour_room = settings.ladder_per_hour - sum(last_hour.values())
    demand: dict[int, int] = {}
    weights: dict[int, float] = {}
    pools: dict[int, list[Entrant]] = {}
    widths: dict[int, float] = {}
    for ladder in ladders:
        entrants = _entrants(session, settings, ladder, bots, load)
        was_settled = ladder.settled_at is not None  # hysteresis: noise alone does not reopen a settled board
        settled = len(entrants) >= ladder.players and ladder_settled(entrants, was_settled)
        widths[ladder.id] = settled_width(was_settled)
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
        free_seats = sum(e.free_slots for e in entrants)
        want = min(free_seats // ladder.players,
                   max(0, tuned["per_hour"] - last_hour.get(ladder.id, 0)) // ladder.players,
                   max(0, hour_room) // ladder.players)
        if settled and want:  # a settled board plays at the maintenance rate, evenly spaced
            spacing = timedelta(hours=ladder.players / max(tuned["maintenance_per_hour"], 1e-9))
            due = ladder.last_scheduled_at is None or _aware(ladder.last_scheduled_at) + spacing <= now
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
                                   settled_width=widths[ladder_id]):
            _store_table(session, ladder, table, deal_key, now)
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
        _store_table(session, ladder, table, deal_key, now)
        for bot_id in table.bot_ids:
            load.tables[bot_id] += 1
        load.open_tables += 1
        report.created[ladder.id] = report.created.get(ladder.id, 0) + 1
        report.placements.append((ladder.id, table))
    return [with_fields(e, free_slots=max(0, capacity(bots[e.bot_id], settings) - load.tables[e.bot_id]))
            for e in entrants]


def _aware(moment: datetime) -> datetime:
    """SQLite hands datetimes back without their zone (they are stored in UTC)."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def ladder_seed(ladder: Ladder, table: int, deal_key: bytes) -> int:
    """The deal of a ladder's ``table``-th table: keyed like a tournament's (``schedules.table_seeds``), and
    particular to this ladder row (its creation time), so a new arena on the same key deals anew."""
    identity = json.dumps(["ladder", ladder.id, ladder.game, ladder.players, _aware(ladder.created_at).isoformat()])
    return table_seeds(table, 1, deal_key, identity)[0]


def _store_table(session: Session, ladder: Ladder, table: Table, deal_key: bytes, now: datetime) -> None:
    """One match per seat rotation, all on the table's deal, all ``SCHEDULED``."""
    number = ladder.tables
    ladder.tables = number + 1
    ladder.last_scheduled_at = now
    seed = ladder_seed(ladder, number, deal_key)
    members = list(table.bot_ids)
    for rotation in range(len(members)):
        order = members[rotation:] + members[:rotation]
        match = Match(ladder_id=ladder.id, game=ladder.game, num_players=ladder.players, seed=seed,
                      params=dict(ladder.params or {}), time_limit_ms=ladder.time_limit_ms, table_index=number,
                      rotation=rotation, status=MatchStatus.SCHEDULED, created_at=now)
        session.add(match)
        session.flush()
        for seat, bot_id in enumerate(order):
            session.add(MatchSeat(match_id=match.id, seat=seat, bot_id=bot_id))
    session.flush()


def _release(session: Session, settings: Settings, ladders: list[Ladder], bots: dict[int, Bot], load: Load,
             report: TickReport) -> None:
    """Scheduled matches, oldest first, whose bots all have room and whose ladder and arena have room."""
    limits = {ladder.id: effective_settings(ladder, settings)["in_flight"] for ladder in ladders}
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
    played = set(session.scalars(select(MatchSeat.bot_id).join(Match, Match.id == MatchSeat.match_id)
                                 .where(MatchSeat.bot_id.in_(waiting), Match.status != MatchStatus.SCHEDULED)
                                 .distinct())) if waiting else set()
    # a newcomer's first match (a bot that never had one released) goes first, then the oldest owed
    newcomer_first = sorted(seats, key=lambda m: (all(b in played for b in seats[m]), m))
    for match_id in newcomer_first:
        seated = seats[match_id]
        if total >= settings.ladder_in_flight:
            break
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
        if any(b not in played for b in seated):
            report.front.add(match_id)
            played.update(seated)
