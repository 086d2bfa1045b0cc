"""A worker's claim on a match row: one atomic UPDATE that takes the match (queued, or running with a lease run
out) for this worker and attempt, and hands back what playing it needs, from its own RETURNING.

A claim stands alone (``claim`` on a connection in autocommit mode: one round trip, its own durable commit) or,
for the next match of a worker's batch, rides in the transaction that records the match before it (``ClaimAhead``:
no unit of work, round trip of its own or commit more; bench.worker_loop, docs/benchmarks.md). A claim made ahead
that the worker does not use after all (a stop request, an error between two matches) is handed back
(``hand_back``), as if never made. Two cases it leaves as a claim on its own would: a record whose commit went
through but whose answer was lost (the connection dropped) leaves the next match leased to this worker, skipped
by its own claim and played again once the lease runs out; and a tournament cancelled while the record runs
(it waits for the board's lock the record holds) finds the next match running, and lets it be played, as any
match running when a tournament is cancelled.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import Connection, Row, and_, bindparam, or_, select, update
from sqlalchemy.orm import Session
from sqlalchemy.sql.expression import Executable

from arena.services import live_feed
from arena.storage.db import Database, core
from arena.storage.json_rows import json_rows, rows_of
from arena.storage.models import Bot, Match, MatchSeat, MatchStatus, Tournament, utcnow
from referee.runner import BotSpec

log = logging.getLogger("arena.matches")
_MATCHES, _SEATS, _BOTS = Match.__table__, MatchSeat.__table__, Bot.__table__
_TWINS, _THIS = _MATCHES.alias("twin"), _MATCHES.alias("this")


# The claim's subqueries name the claimed match by its id (the bound parameter), never by a column of the row
# being updated: SQLAlchemy writes every column in a RETURNING unqualified on SQLite, subqueries' included (their
# join conditions too), so ``matches.id`` there would read as the inner table's own ``id``. Inside one subquery
# the names are each one table's (SQLite refuses an ambiguous one, loudly).
def _of_claimed(column: str) -> Any:
    return select(_THIS.c[column]).where(_THIS.c.id == bindparam("match_id")).scalar_subquery()


def _deal_of_claimed(owner: str) -> Any:
    """The claimed match's deal, as (id, status) rows, when it belongs to a tournament (``owner``
    "tournament_id") or a ladder ("ladder_id"); no rows otherwise (``publication.deal_of``)."""
    return (select(json_rows(_TWINS.c.id, _TWINS.c.status))
            .where(_TWINS.c[owner] == _of_claimed(owner), _TWINS.c.seed == _of_claimed("seed"))
            .scalar_subquery().label(owner.replace("_id", "_deal")))


# What the claim hands back, from its own UPDATE (no second read): the match's setup, its tournament's status,
# its seats' bots and its deal's statuses (each a scalar subquery: one statement, one round trip, in all).
CLAIMED = (_MATCHES.c.attempts, _MATCHES.c.tournament_id, _MATCHES.c.ladder_id, _MATCHES.c.game, _MATCHES.c.seed,
           _MATCHES.c.params, _MATCHES.c.time_limit_ms, _MATCHES.c.num_players,
           select(Tournament.__table__.c.status).where(Tournament.__table__.c.id == _of_claimed("tournament_id"))
           .scalar_subquery().label("tournament_status"),
           select(json_rows(_SEATS.c.seat, _BOTS.c.url, _BOTS.c.secret, _BOTS.c.name, _BOTS.c.id))
           .select_from(_SEATS.join(_BOTS, _BOTS.c.id == _SEATS.c.bot_id))
           .where(_SEATS.c.match_id == bindparam("match_id")).scalar_subquery().label("seats"),
           _deal_of_claimed("tournament_id"), _deal_of_claimed("ladder_id"))
_CLAIMABLE = (_MATCHES.c.id == bindparam("match_id"),
              or_(_MATCHES.c.status == MatchStatus.QUEUED,
                  and_(_MATCHES.c.status == MatchStatus.RUNNING, _MATCHES.c.lease_until < bindparam("now"))))
_TAKE = {"status": MatchStatus.RUNNING, "attempts": _MATCHES.c.attempts + 1, "worker": bindparam("worker"),
         "lease_until": bindparam("lease"), "started_at": bindparam("started")}
# Built once: a Core statement with bound parameters skips building and the ORM's per-statement work.
_CLAIM = update(_MATCHES).where(*_CLAIMABLE).values(**_TAKE).returning(*CLAIMED)
# Ahead, inside a record that holds its match's row and its board's lock, a claim must not wait for a row another
# transaction holds (that one may be waiting for the board's lock: a deadlock); on PostgreSQL a row locked elsewhere
# is skipped (the match is then claimed on its own, later). SQLite writes one transaction at a time: nothing to skip.
_AHEAD = _MATCHES.alias("ahead")
_CLAIM_AHEAD = (update(_MATCHES).where(*_CLAIMABLE, _MATCHES.c.id.in_(
    select(_AHEAD.c.id).where(_AHEAD.c.id == bindparam("match_id")).with_for_update(skip_locked=True)))
    .values(**_TAKE).returning(*CLAIMED))


def claim(session: Session | Connection, match_id: int, worker: str, lease_s: int) -> Row[Any] | None:
    """Take the match for this worker; None when it is finished, cancelled or leased to another. Else the
    claimed row's ``CLAIMED`` columns, returned by the claiming UPDATE itself (no second read: its seats'
    bots are ``seat_specs`` of it, its deal ``claimed_deal``). On a connection in autocommit mode
    (``Database.autocommit``) or in a session's transaction."""
    connection = session if isinstance(session, Connection) else core(session)
    return connection.execute(_CLAIM, _params(match_id, worker, lease_s)).first()


def _params(match_id: int, worker: str, lease_s: int) -> dict[str, Any]:
    now = utcnow()
    return {"match_id": match_id, "now": now, "worker": worker, "started": now,
            "lease": now + timedelta(seconds=lease_s)}


@dataclass
class ClaimAhead:
    """The next match of a worker's batch, to be claimed in the transaction that records the match before it
    (``claim_ahead``, then ``taken`` once that transaction committed). ``take`` hands the claim to the one
    who plays the match, once."""

    match_id: int
    lease_s: int
    urls: tuple[str, ...] = ()  # its seats' bots, as the batch read them when it began (``seat_urls``)
    row: Any = None  # the claim's row (``CLAIMED``), once made; None: none
    claimed_at: float = 0.0  # (``time.perf_counter`` before the claim: its lease ends no earlier than this + lease)
    worker: str = ""

    def take(self, match_id: int) -> tuple[Any, float] | None:
        """The claim and when it was made, if it is of ``match_id``; afterwards it is no longer held here."""
        if self.row is None or self.match_id != match_id:
            return None
        row, self.row = self.row, None
        return row, self.claimed_at


def claim_ahead(ahead: ClaimAhead, worker: str) -> tuple[Executable, dict[str, Any]]:
    """``claim`` of ``ahead``'s match, as the statement and parameters the caller runs in its transaction (a
    record holding its locks: a row locked elsewhere is skipped, not waited for; the record sends it with its
    other statements, ``read_together``). Its row (None: not claimed) is set on ``ahead`` once the caller's
    transaction committed (``taken``)."""
    return _CLAIM_AHEAD, _params(ahead.match_id, worker, ahead.lease_s)


def taken(ahead: ClaimAhead, worker: str, row: Any, at: float) -> None:
    """What ``claim_ahead`` made, once the transaction it ran in committed (before that it is no claim); ``at``:
    ``time.perf_counter()`` before it was sent."""
    ahead.row, ahead.claimed_at, ahead.worker = row, at, worker


def hand_back(db: Database, ahead: ClaimAhead | None) -> None:
    """A claim made ahead that will not be played (its batch stops or fails): the match is queued again as it
    was, its attempt not counted (no bot was called), while the claim still holds it. Never raises (a batch's
    own error goes on): a claim not handed back is played again once its lease runs out."""
    if ahead is None or ahead.row is None:
        return
    attempt, ahead.row = ahead.row.attempts, None
    try:
        with db.session() as session:
            session.execute(update(Match).where(Match.id == ahead.match_id, Match.status == MatchStatus.RUNNING,
                                                Match.worker == ahead.worker, Match.attempts == attempt)
                            .values(status=MatchStatus.QUEUED, lease_until=None, attempts=attempt - 1))
    except Exception:
        log.exception("could not hand back match %s", ahead.match_id)


def seat_urls(db: Database, match_ids: list[int]) -> dict[int, tuple[str, ...]]:
    """The URLs of each match's seats' bots, in seat order: a batch opens its next match's connections with them
    while it records the match before (``referee.connect_ahead``). Only a hint: the claim reads the seats again,
    and a URL changed meanwhile is a connection the next match does not take (closed as it starts)."""
    found: dict[int, list[str]] = {}
    with db.session(readonly=True) as session:
        for match_id, url in session.execute(_SEAT_URLS, {"ids": match_ids}):
            found.setdefault(match_id, []).append(url)
    return {match_id: tuple(urls) for match_id, urls in found.items()}


_SEAT_URLS = (select(_SEATS.c.match_id, _BOTS.c.url).select_from(_SEATS.join(_BOTS, _BOTS.c.id == _SEATS.c.bot_id))
              .where(_SEATS.c.match_id.in_(bindparam("ids", expanding=True)))
              .order_by(_SEATS.c.match_id, _SEATS.c.seat))


def seat_specs(claimed: Row[Any]) -> list[BotSpec]:
    """The seats' bots of a claimed match (its ``seats`` column), in seat order."""
    return [BotSpec(url=url, secret=secret, name=name, bot_id=bot_id)
            for _seat, url, secret, name, bot_id in sorted(rows_of(claimed.seats))]


def claimed_deal(match_id: int, claimed: Row[Any]) -> live_feed.Deal:
    """The deal of a claimed match, as the claim found it (``live_feed.read_deal``, read by the claim itself):
    the claim's own change is not in what its subqueries read on PostgreSQL, so this match is said running."""
    if claimed.tournament_id is not None:
        rows = rows_of(claimed.tournament_deal)
    elif claimed.ladder_id is not None:
        rows = rows_of(claimed.ladder_deal)
    else:
        rows = [[match_id, MatchStatus.RUNNING]]
    statuses = sorted((other, MatchStatus.RUNNING if other == match_id else status) for other, status in rows)
    return live_feed.Deal(match_id, claimed.tournament_id, claimed.ladder_id, statuses)
