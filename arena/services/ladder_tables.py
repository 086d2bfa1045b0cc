"""A ladder table: its rotations stored with their deals, what every bot owes, and cancelling what a bot
that left the ladder owes. A table is ``(ladder_id, table_index)``: one match per seat rotation, so every bot
holds every seat once.

Its deals (``ARENA_LADDER_DEALS``). ``independent`` (the default): every rotation its own deal. ``duplicate``:
the rotations share one, so deal luck cancels within the table too, but a bot plays that deal from every seat
and one that remembers what it saw knows its opponents' hands in the next rotation, and live in a rotation
it plays at the same time (capacity 2 or more): a red-team bot read 327 of 327 opponents' starting hands that
way on a Pajarracos ladder. No server-side rule stops a bot from remembering, and the ladder is where bots
nobody vetted play; an arena whose bots are all trusted (its own, a class's) may choose ``duplicate``.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime

from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session

from arena.config import Settings
from arena.domain.ladder_planner import Table
from arena.domain.schedules import table_seeds
from arena.services.publication import close_deal, in_id_order
from arena.storage.models import Deals, Ladder, Match, MatchSeat, MatchStatus, utcnow

ACTIVE = (MatchStatus.QUEUED, MatchStatus.RUNNING)
OWED = (MatchStatus.SCHEDULED, *ACTIVE)
UNSTARTED = (MatchStatus.SCHEDULED, MatchStatus.QUEUED)


@dataclass
class Load:
    """Every bot's open ladder tables and matches in flight, and the arena's totals, as the tick goes."""

    tables: Counter[int] = field(default_factory=Counter)  # bot -> open ladder tables
    active: Counter[int] = field(default_factory=Counter)  # bot -> matches queued (ladder) or running (any)
    ladder_active: Counter[int] = field(default_factory=Counter)  # ladder -> matches queued or running
    open_tables: int = 0


def aware(moment: datetime) -> datetime:
    """SQLite hands datetimes back without their zone (they are stored in UTC)."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def table_deals(ladder: Ladder, table: int, deal_key: bytes, deals: str = Deals.INDEPENDENT) -> list[int]:
    """The seeds of a ladder's ``table``-th table, one per rotation: keyed like a tournament's
    (``schedules.table_seeds``) and particular to this ladder row (its creation time), so a new arena on the
    same key deals anew. ``duplicate``: the first one for every rotation."""
    identity = json.dumps(["ladder", ladder.id, ladder.game, ladder.players, aware(ladder.created_at).isoformat()])
    if deals == Deals.DUPLICATE:
        return table_seeds(table, 1, deal_key, identity) * ladder.players
    return table_seeds(table, ladder.players, deal_key, identity)


def store_table(session: Session, settings: Settings, ladder: Ladder, table: Table, deal_key: bytes,
                now: datetime) -> None:
    """One match per seat rotation, each on its deal (``table_deals``), all ``SCHEDULED``."""
    number = ladder.tables
    ladder.tables = number + 1
    ladder.last_scheduled_at = now
    seeds = table_deals(ladder, number, deal_key, settings.ladder_deals)
    members = list(table.bot_ids)
    for rotation in range(len(members)):
        order = members[rotation:] + members[:rotation]
        match = Match(ladder_id=ladder.id, game=ladder.game, num_players=ladder.players, seed=seeds[rotation],
                      params=dict(ladder.params or {}), time_limit_ms=ladder.time_limit_ms, table_index=number,
                      rotation=rotation, status=MatchStatus.SCHEDULED, created_at=now)
        session.add(match)
        session.flush()
        for seat, bot_id in enumerate(order):
            session.add(MatchSeat(match_id=match.id, seat=seat, bot_id=bot_id))
    session.flush()


def cancel_off_ladder(session: Session, off: set[int]) -> list[int]:
    """The tables seating a bot no longer on the ladder are cancelled, but only those none of whose
    rotations has started: a started table is played out (its bots' pause, retirement or probation takes
    effect after it). Seat luck cancels only over all of a table's rotations (and deal luck too, with
    duplicate deals); cancelling the rest of a table once one rotation was played let a bot that saw it go
    its way (its rank comes with ``/end``; a running one shows it its hand) pause itself and keep only a
    lucky rotation rated."""
    if not off:
        return []
    rows = session.execute(
        select(Match.ladder_id, Match.table_index).join(MatchSeat, MatchSeat.match_id == Match.id)
        .where(Match.ladder_id.is_not(None), Match.status.in_(UNSTARTED), MatchSeat.bot_id.in_(off))
        .distinct()).all()
    cancelled = []
    for ladder_id, table_index in sorted(rows):
        rotations = in_id_order(session.execute(select(Match.id, Match.status).where(
            Match.ladder_id == ladder_id, Match.table_index == table_index)))
        if any(status not in (*UNSTARTED, MatchStatus.CANCELLED) for _id, status in rotations):
            continue  # started: played out
        for match_id, _status in rotations:
            done = session.execute(update(Match).where(Match.id == match_id, Match.status.in_(UNSTARTED))
                                   .values(status=MatchStatus.CANCELLED, finished_at=utcnow())
                                   .execution_options(synchronize_session=False))
            if done.rowcount == 1:
                close_deal(session, match_id)
                cancelled.append(match_id)
    return cancelled


def load(session: Session) -> Load:
    """From the matches owed, queued or running alone (``ix_matches_status_id``): never a scan of the
    matches played."""
    result = Load()
    rows = session.execute(
        select(MatchSeat.bot_id, Match.id, Match.ladder_id, Match.table_index, Match.status)
        .join(Match, Match.id == MatchSeat.match_id)
        .where(Match.status.in_(OWED), or_(Match.ladder_id.is_not(None), Match.status == MatchStatus.RUNNING))
    ).all()
    tables: dict[tuple[int, int], set[int]] = defaultdict(set)
    active: dict[int, set[int]] = defaultdict(set)  # ladder -> its matches queued or running
    for bot_id, match_id, ladder_id, table_index, status in rows:
        if status in ACTIVE:
            result.active[bot_id] += 1
            if ladder_id is not None:
                active[ladder_id].add(match_id)
        if ladder_id is not None:
            tables[(ladder_id, table_index)].add(bot_id)
    for bots in tables.values():
        for bot_id in bots:
            result.tables[bot_id] += 1
    result.open_tables = len(tables)
    result.ladder_active.update({ladder_id: len(ids) for ladder_id, ids in active.items()})
    return result
