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
from dataclasses import dataclass
from types import EllipsisType
from typing import Any

from sqlalchemy import Row, and_, bindparam, case, select, update
from sqlalchemy.orm import Session

from arena.services import recorders
from arena.services.leaderboards import lock_board
from arena.services.void_matches import void_reason
from arena.storage.db import core
from arena.storage.models import Match, MatchStatus
from arena.storage.replays import decompress

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

    def any_in(self, wanted: tuple[str, ...]) -> bool:
        return any(status in wanted for _id, status in self.statuses)


def settle_deal(session: Session, match_id: int, fresh: dict[int, dict[str, Any]] | None = None,
                known: DealRow | None = None, bots: dict[int, list[int]] | None = None) -> Settled:
    """``close_deal``, also telling the deal's statuses after it (read once, for the live feed and the
    tournament's end). ``bots``: the seats' bot ids, in seat order, of matches whose caller has them."""
    row = known or session.execute(select(*DEAL_COLUMNS).where(Match.id == match_id)).first()
    if row is None:
        return Settled([], [])
    lock_board(session, row.game, row.num_players)
    fresh = fresh or {}
    rows = _deal_rows(session, _DEAL_REPLAYS, match_id, row.tournament_id, row.ladder_id, row.seed, fresh)
    statuses = [(other, status) for other, status, _blob in rows]
    if any(status in OPEN for _id, status in statuses):
        return Settled([], statuses)
    rated: list[tuple[int, dict[str, Any]]] = []
    void: list[tuple[int, dict[str, Any], str]] = []
    for sealed_id, _status, blob in [r for r in rows if r[1] == MatchStatus.SEALED]:
        replay = fresh.get(sealed_id) or decompress(blob)
        reason = void_reason(replay)
        if reason:
            void.append((sealed_id, replay, reason))
        else:
            rated.append((sealed_id, replay))
    published: dict[int, str] = {}
    if rated:  # one UPDATE for them all: it hands back the ids it changed (all, under the board's lock)
        changed = set(core(session).scalars(_PUBLISH_FINISHED, {"ids": [match_id for match_id, _ in rated]}))
        rated = [(match_id, replay) for match_id, replay in rated if match_id in changed]
        published.update((match_id, MatchStatus.FINISHED) for match_id, _ in rated)
    for match_id, _replay, reason in void:
        if core(session).execute(_PUBLISH_VOID, {"match_id": match_id, "error": reason}).rowcount == 1:
            published[match_id] = MatchStatus.VOID
    void = [(match_id, replay, reason) for match_id, replay, reason in void if match_id in published]
    publish_many(session, rated, recorders.RATED, row.tournament_id, bots)
    publish_many(session, [(match_id, replay) for match_id, replay, _ in void], recorders.VOID, row.tournament_id, bots)
    return Settled(sorted(published), [(i, published.get(i, status)) for i, status in statuses])


_MATCHES = Match.__table__
_PUBLISH_FINISHED = (update(_MATCHES).where(_MATCHES.c.id.in_(bindparam("ids", expanding=True)),
                                            _MATCHES.c.status == MatchStatus.SEALED)
                     .values(status=MatchStatus.FINISHED, error=None).returning(_MATCHES.c.id))
_PUBLISH_VOID = (update(_MATCHES).where(_MATCHES.c.id == bindparam("match_id"), _MATCHES.c.status == MatchStatus.SEALED)
                 .values(status=MatchStatus.VOID, error=bindparam("error")))


def _by_deal(*columns: Any) -> dict[str, Any]:
    """A select of ``columns`` of a deal's matches in id order, one statement per kind of deal (``deal_of``),
    built once."""
    base = select(*columns).order_by(_MATCHES.c.id)
    seed = _MATCHES.c.seed == bindparam("seed")
    return {"tournament": base.where(_MATCHES.c.tournament_id == bindparam("owner"), seed),
            "ladder": base.where(_MATCHES.c.ladder_id == bindparam("owner"), seed),
            "own": base.where(_MATCHES.c.id == bindparam("owner"))}


_DEAL_STATUSES = _by_deal(_MATCHES.c.id, _MATCHES.c.status)
# with the stored replay of each sealed match but the one the caller holds (what publishing the deal needs)
_DEAL_REPLAYS = _by_deal(_MATCHES.c.id, _MATCHES.c.status, case(
    (and_(_MATCHES.c.status == MatchStatus.SEALED, _MATCHES.c.id != bindparam("held")), _MATCHES.c.replay_gz)))


def _deal_rows(session: Session, statements: dict[str, Any], match_id: int, tournament_id: int | None,
               ladder_id: int | None, seed: int, given: dict[int, Any] | None = None) -> list[Any]:
    if tournament_id is not None:
        kind, params = "tournament", {"owner": tournament_id, "seed": seed}
    elif ladder_id is not None:
        kind, params = "ladder", {"owner": ladder_id, "seed": seed}
    else:
        kind, params = "own", {"owner": match_id}
    if given is not None:
        params["held"] = next(iter(given), -1)
    return list(core(session).execute(statements[kind], params))


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
    return [(other, status) for other, status in
            _deal_rows(session, _DEAL_STATUSES, match_id, tournament_id, ladder_id, seed)]


def publish(session: Session, match_id: int, replay: dict[str, Any], stages: Stages = recorders.RATED,
            tournament_id: int | EllipsisType | None = ..., bots: list[int] | None = None) -> None:
    """Write what the match's replay says where pages, the API and the ratings read it: the named
    recorders of ``stages`` (seat results, live Elo, outcome store, standings, metrics, faults), in order.
    ``tournament_id`` and ``bots`` (the seats' bot ids in seat order): the match's, when the caller knows them."""
    publish_many(session, [(match_id, replay)], stages, tournament_id, None if bots is None else {match_id: bots})


def publish_many(session: Session, matches: list[tuple[int, dict[str, Any]]], stages: Stages = recorders.RATED,
                 tournament_id: int | EllipsisType | None = ..., bots: dict[int, list[int]] | None = None) -> None:
    """``publish`` for matches of one deal, in id order, each recorder writing them all at once (a statement
    per table, not per match). ``bots``: the seats' bot ids of the matches whose caller has them."""
    if not matches:
        return
    bots = bots or {}
    recorders.run(session, stages, recorders.Published.load_many(
        session, [(match_id, replay, bots.get(match_id)) for match_id, replay in matches], tournament_id))
    for match_id, replay in matches:
        log.debug("match published", extra={"match_id": match_id, "game": replay["game"],
                                           "ranks": replay["result"]["ranks"]})
