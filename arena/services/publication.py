"""A deal stays secret until every match that plays it is over; then its matches are published.

The rotations of a table share one seed (duplicate play), so one match's replay, seed or result tells
about the hands still hidden in its twins. A match played while another match of its deal is still
queued or running is therefore *sealed*: its replay and result are stored in its row, but nothing
derived from them is written where anyone can read it (seat results, faults, live and fitted ratings,
tournament standings, metrics), and reads show neither its seed nor its result (``is_public``). When the
deal's last open match ends (recorded, cancelled or failed to start), ``close_deal`` publishes every
sealed match of the deal in id order: the same fan-out a match gets at once when its deal is closed (or,
for a void match, where every seat forfeited before playing, only its seats' faults: never rated).

A deal is the matches of one tournament (or one ladder) that share a seed; any other match is its own deal.
Callers hold the leaderboard's write lock (``lock_board``) before ``close_deal``, so of two twins
recorded at the same moment the second sees the first sealed and publishes both (no write skew).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from types import EllipsisType
from typing import Any

from sqlalchemy import Row, and_, bindparam, case, func, select, update
from sqlalchemy.orm import Session

from arena.services import recorders
from arena.services.leaderboards import lock_board
from arena.services.void_matches import void_reason
from arena.storage.db import core, pipelined
from arena.storage.json_rows import json_rows, rows_of
from arena.storage.models import LiveRating, Match, MatchSeat, MatchStatus
from arena.storage.replays import recall

log = logging.getLogger("arena.matches")

OPEN = (MatchStatus.SCHEDULED, MatchStatus.QUEUED, MatchStatus.RUNNING)  # scheduled: a ladder rotation still owed
PUBLIC = (MatchStatus.FINISHED, MatchStatus.VOID)  # set only when a deal is published
Stages = tuple[tuple[str, recorders.Recorder], ...]
# what close_deal needs to know of a match (``record`` has it back from its UPDATE)
DEAL_COLUMNS = (Match.tournament_id, Match.ladder_id, Match.seed, Match.game, Match.num_players)
DealRow = Row[Any]


def is_public(status: str) -> bool:
    """Whether a match's seed, result and replay may be shown: only once its whole deal is over."""
    return status in PUBLIC


def close_deal(session: Session, match_id: int, fresh: dict[int, dict[str, Any]] | None = None,
               known: DealRow | None = None) -> list[int]:
    """Publish the sealed matches of ``match_id``'s deal if none of its matches is open any more; returns
    the published ids. Takes the leaderboard's lock first (see the module docstring). ``fresh``: replays
    the caller holds already (the match it has just stored), so they are not read back and decompressed;
    ``known``: the match's tournament, ladder, seed, game and players, when the caller has them."""
    return settle_deal(session, match_id, fresh, known).published


@dataclass(frozen=True)
class Settled:
    """What ``settle_deal`` did: the ids it published and its deal's statuses as they are now, in id order."""

    published: list[int]
    statuses: list[tuple[int, str]]
    tournament_open: int | None = None  # its tournament's matches queued or running, as read under the lock

    def any_in(self, wanted: tuple[str, ...]) -> bool:
        return any(status in wanted for _id, status in self.statuses)


def settle_deal(session: Session, match_id: int, fresh: dict[int, dict[str, Any]] | None = None,
                known: DealRow | None = None, bots: dict[int, list[int]] | None = None,
                read: list[Any] | None = None) -> Settled:
    """``close_deal``, also telling the deal's statuses after it (read once, for the live feed) and, for a
    tournament's deal, how many of the tournament's matches are still open (read in the same statement, for
    its end). ``bots``: the seats' bot ids, in seat order, of matches whose caller has them (the others' are
    read with the deal). ``read``: the rows of ``deal_query``, when the caller read them already, under the
    board's lock, in this transaction (a worker's record reads them with its other statements)."""
    row = known or session.execute(select(*DEAL_COLUMNS).where(Match.id == match_id)).first()
    if row is None:
        return Settled([], [])
    lock_board(session, row.game, row.num_players)
    fresh = fresh or {}
    postgres = core(session).dialect.name == "postgresql"
    rows = in_id_order(read if read is not None else core(session).execute(*deal_query(postgres, match_id, row, fresh)))
    statuses = [(other, status) for other, status, *_rest in rows]
    tournament_open = rows[0].tournament_open if rows and row.tournament_id is not None else None
    if any(status in OPEN for _id, status in statuses):
        return Settled([], statuses, tournament_open)
    rated: list[tuple[int, dict[str, Any]]] = []
    void: list[tuple[int, dict[str, Any], str]] = []
    bots = dict(bots or {})
    for sealed_id, _status, blob, seats, *_rest in [r for r in rows if r.status == MatchStatus.SEALED]:
        bots.setdefault(sealed_id, [bot for _seat, bot in sorted(rows_of(seats))])
        replay = fresh.get(sealed_id) or recall(sealed_id, blob)
        reason = void_reason(replay)
        if reason:
            void.append((sealed_id, replay, reason))
        else:
            rated.append((sealed_id, replay))
    published: dict[int, str] = {}
    for match_id, _replay, reason in void:
        if core(session).execute(_PUBLISH_VOID, {"match_id": match_id, "error": reason}).rowcount == 1:
            published[match_id] = MatchStatus.VOID
    void = [(match_id, replay, reason) for match_id, replay, reason in void if match_id in published]
    # On PostgreSQL what is left only writes, in one round trip (``recorders.WRITES_ONLY``: the live ratings came
    # with the deal; on SQLite the recorders read them, and the block adds nothing). The rated matches are all
    # published by their UPDATE, whose rows are not read back: each was read sealed under the board's lock, and
    # a sealed match changes only here, under that lock (every other UPDATE of a match's status is limited to
    # open ones: scheduled, queued or running).
    live = {bot: (elo, games) for r in rows for bot, elo, games in rows_of(r.live)} if postgres else None
    with pipelined(session):
        if rated:  # one UPDATE for them all
            core(session).execute(_PUBLISH_FINISHED, {"ids": [match_id for match_id, _ in rated]})
            published.update((match_id, MatchStatus.FINISHED) for match_id, _ in rated)
        publish_many(session, rated, recorders.RATED, row.tournament_id, bots, live)
        publish_many(session, [(match_id, replay) for match_id, replay, _ in void], recorders.VOID,
                     row.tournament_id, bots)
    return Settled(sorted(published), [(i, published.get(i, status)) for i, status in statuses], tournament_open)


_MATCHES = Match.__table__
_PUBLISH_FINISHED = (update(_MATCHES).where(_MATCHES.c.id.in_(bindparam("ids", expanding=True)),
                                            _MATCHES.c.status == MatchStatus.SEALED)
                     .values(status=MatchStatus.FINISHED, error=None))
_PUBLISH_VOID = (update(_MATCHES).where(_MATCHES.c.id == bindparam("match_id"), _MATCHES.c.status == MatchStatus.SEALED)
                 .values(status=MatchStatus.VOID, error=bindparam("error")))


def _deal_where(table: Any, kind: str) -> tuple[Any, ...]:
    """``deal_of`` for one kind of deal ("tournament", "ladder" or "own"), on ``table`` (the matches or an
    alias of them), with the owner (or the match's own id) and the seed as bound parameters."""
    if kind == "own":
        return (table.c.id == bindparam("owner"),)
    return (table.c[f"{kind}_id"] == bindparam("owner"), table.c.seed == bindparam("seed"))


def _by_deal(*columns: Any) -> dict[str, Any]:
    """A select of ``columns`` of a deal's matches (the first column their id), one statement per kind of deal
    (``deal_of``), built once. In no order: ``in_id_order`` sorts the few rows. Asked for in id order, SQLite
    walked the tournament's (or ladder's) index by id, which gives that order, through every match of the
    tournament to find the deal's, instead of the deal's index (ix_matches_deal): each record of a tournament of
    1,200 matches read them all (about 1 ms), and a ladder's, every match it ever played."""
    return {kind: select(*columns).where(*_deal_where(_MATCHES, kind)) for kind in ("tournament", "ladder", "own")}


def in_id_order(rows: Iterable[Any]) -> list[Any]:
    """A deal's rows (``_by_deal``), by match id."""
    return sorted(rows, key=lambda row: row[0])


_DEAL_STATUSES = _by_deal(_MATCHES.c.id, _MATCHES.c.status)
# With the stored replay of each sealed match but the one the caller holds and the seats' bots of each sealed
# match (what publishing the deal needs) and, for a tournament's deal, the tournament's open matches (whether
# the deal ends it): one statement, read under the board's lock.
_SEATS, _LIVE = MatchSeat.__table__, LiveRating.__table__
_SEALED_ROW = _MATCHES.c.status == MatchStatus.SEALED
_DEAL_REPLAYS = _by_deal(
    _MATCHES.c.id, _MATCHES.c.status,
    case((and_(_SEALED_ROW, _MATCHES.c.id != bindparam("held")), _MATCHES.c.replay_gz)).label("replay_gz"),
    case((_SEALED_ROW, select(json_rows(_SEATS.c.seat, _SEATS.c.bot_id))
          .where(_SEATS.c.match_id == _MATCHES.c.id).scalar_subquery())).label("seats"))


def tournament_open(table: Any, tournament: str) -> Any:
    """How many of a tournament's matches are still queued or running, on ``table`` (the matches or an alias of
    them), the tournament's id the bound parameter named ``tournament``: none left, it is finished
    (``tournaments.finish_tournament_if_done``, which reads it alone or is handed it by ``settle_deal``).
    A count, not an EXISTS, though only "any?" is asked: PostgreSQL may plan an EXISTS as a sequential scan that
    stops at the first open match it meets, which it expects near the start of the table, while a running
    tournament's matches are the table's newest rows, after every older tournament's (tried: it chose that scan).
    A count reads the open ones by the index (tournament_id, status)."""
    return select(func.count()).select_from(table).where(
        table.c.tournament_id == bindparam(tournament), table.c.status.in_([MatchStatus.QUEUED, MatchStatus.RUNNING]))


_DEAL_REPLAYS["tournament"] = _DEAL_REPLAYS["tournament"].add_columns(
    tournament_open(_MATCHES.alias("other"), "owner").scalar_subquery().label("tournament_open"))
# On PostgreSQL also, for each sealed match, the live ratings of its seats' bots, as publishing starts from them
# (``recorders.live_ratings``, a statement and a round trip of its own otherwise): found from the match's seats
# by the two tables' keys, whatever the board's size or the bots' histories. Not on SQLite, whose JSON writes a
# float with 15 digits: the live Elo would start from a rounded value (and SQLite has no round trips).
_SEATS_LIVE = (select(json_rows(_LIVE.c.bot_id, _LIVE.c.elo, _LIVE.c.games))
               .select_from(_SEATS.join(_LIVE, and_(_LIVE.c.game == bindparam("game"),
                                                    _LIVE.c.players == bindparam("players"),
                                                    _LIVE.c.bot_id == _SEATS.c.bot_id)))
               .where(_SEATS.c.match_id == _MATCHES.c.id).scalar_subquery())
_DEAL_REPLAYS_LIVE = {kind: statement.add_columns(case((_SEALED_ROW, _SEATS_LIVE)).label("live"))
                      for kind, statement in _DEAL_REPLAYS.items()}


def deal_query(postgres: bool, match_id: int, known: DealRow, fresh: dict[int, Any]) -> tuple[Any, dict[str, Any]]:
    """The statement (and its parameters) ``settle_deal`` reads the deal of ``match_id`` with: every match of the
    deal, with the stored replay and seats of each sealed one (not the replay of the match in ``fresh``, held
    by the caller) and, on PostgreSQL (``postgres``), their bots' live ratings. To be read under the board's lock.
    ``known``: the match's ``DEAL_COLUMNS``."""
    return _deal_statement(_DEAL_REPLAYS_LIVE if postgres else _DEAL_REPLAYS, match_id, known.tournament_id,
                           known.ladder_id, known.seed, {"held": next(iter(fresh), -1),
                                                         **({"game": known.game, "players": known.num_players}
                                                            if postgres else {})})


def _deal_statement(statements: dict[str, Any], match_id: int, tournament_id: int | None, ladder_id: int | None,
                    seed: int, more: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
    if tournament_id is not None:
        kind, params = "tournament", {"owner": tournament_id, "seed": seed}
    elif ladder_id is not None:
        kind, params = "ladder", {"owner": ladder_id, "seed": seed}
    else:
        kind, params = "own", {"owner": match_id}
    return statements[kind], {**params, **(more or {})}


def deal_of(match_id: int, tournament_id: int | None, ladder_id: int | None, seed: int) -> tuple[Any, ...]:
    """The filter selecting the matches of one deal: the tournament's (or ladder's) matches with its seed;
    a match outside both is a deal of its own."""
    if tournament_id is not None:
        return (Match.tournament_id == tournament_id, Match.seed == seed)
    if ladder_id is not None:
        return (Match.ladder_id == ladder_id, Match.seed == seed)
    return (Match.id == match_id,)


def deal_statuses(session: Session, match_id: int, tournament_id: int | None, ladder_id: int | None,
                  seed: int) -> list[tuple[int, str]]:
    """(id, status) of every match of the deal (``deal_of``), in id order."""
    statement, params = _deal_statement(_DEAL_STATUSES, match_id, tournament_id, ladder_id, seed)
    return [(other, status) for other, status in in_id_order(core(session).execute(statement, params))]


def publish(session: Session, match_id: int, replay: dict[str, Any], stages: Stages = recorders.RATED,
            tournament_id: int | EllipsisType | None = ..., bots: list[int] | None = None) -> None:
    """Write what the match's replay says where pages, the API and the ratings read it: the named
    recorders of ``stages`` (seat results, live Elo, outcome store, standings, metrics, faults), in order.
    ``tournament_id`` and ``bots`` (the seats' bot ids in seat order): the match's, when the caller knows them."""
    publish_many(session, [(match_id, replay)], stages, tournament_id, None if bots is None else {match_id: bots})


def publish_many(session: Session, matches: list[tuple[int, dict[str, Any]]], stages: Stages = recorders.RATED,
                 tournament_id: int | EllipsisType | None = ..., bots: dict[int, list[int]] | None = None,
                 live: dict[int, tuple[float, int]] | None = None) -> None:
    """``publish`` for matches of one deal, in id order, each recorder writing them all at once (a statement
    per table, not per match). ``bots``: the seats' bot ids of the matches whose caller has them; ``live``:
    the live ratings (Elo, games) of the deal's bots, when the caller read them under the board's lock."""
    if not matches:
        return
    bots = bots or {}
    published = recorders.Published.load_many(
        session, [(match_id, replay, bots.get(match_id)) for match_id, replay in matches], tournament_id)
    for match in published:
        match.live_before = live
    recorders.run(session, stages, published)
    for match_id, replay in matches:
        log.debug("match published", extra={"match_id": match_id, "game": replay["game"],
                                           "ranks": replay["result"]["ranks"]})
