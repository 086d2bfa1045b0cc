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
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from arena.services import recorders
from arena.services.leaderboards import lock_board
from arena.services.void_matches import void_reason
from arena.storage.models import Match, MatchStatus
from arena.storage.replays import decompress

log = logging.getLogger("arena.matches")

OPEN = (MatchStatus.SCHEDULED, MatchStatus.QUEUED, MatchStatus.RUNNING)  # scheduled: a ladder rotation still owed
PUBLIC = (MatchStatus.FINISHED, MatchStatus.VOID)  # set only when a deal is published
Stages = tuple[tuple[str, recorders.Recorder], ...]


def is_public(status: str) -> bool:
    """Whether a match's seed, result and replay may be shown: only once its whole deal is over."""
    return status in PUBLIC


def close_deal(session: Session, match_id: int, fresh: dict[int, dict[str, Any]] | None = None) -> list[int]:
    """Publish the sealed matches of ``match_id``'s deal if none of its matches is open any more; returns
    the published ids. Takes the leaderboard's lock first (see the module docstring). ``fresh``: replays
    the caller holds already (the match it has just stored), so they are not read back and decompressed."""
    row = session.execute(select(Match.tournament_id, Match.ladder_id, Match.seed, Match.game, Match.num_players)
                          .where(Match.id == match_id)).first()
    if row is None:
        return []
    lock_board(session, row.game, row.num_players)
    deal = deal_of(match_id, row.tournament_id, row.ladder_id, row.seed)
    if session.scalar(select(func.count()).select_from(Match).where(*deal, Match.status.in_(OPEN))):
        return []
    published = []
    for sealed_id in session.scalars(select(Match.id).where(*deal, Match.status == MatchStatus.SEALED)
                                     .order_by(Match.id)).all():
        replay = (fresh or {}).get(sealed_id) or decompress(
            session.scalar(select(Match.replay_gz).where(Match.id == sealed_id)))
        void = void_reason(replay)
        done = session.execute(update(Match).where(Match.id == sealed_id, Match.status == MatchStatus.SEALED)
                               .values(status=MatchStatus.VOID if void else MatchStatus.FINISHED, error=void)
                               .execution_options(synchronize_session=False))
        if done.rowcount != 1:
            continue
        publish(session, sealed_id, replay, recorders.VOID if void else recorders.RATED)
        published.append(sealed_id)
    return published


def deal_of(match_id: int, tournament_id: int | None, ladder_id: int | None, seed: int) -> tuple[Any, ...]:
    """The filter selecting the matches of one deal: the tournament's (or ladder's) matches with its seed;
    a match outside both is a deal of its own."""
    if tournament_id is not None:
        return (Match.tournament_id == tournament_id, Match.seed == seed)
    if ladder_id is not None:
        return (Match.ladder_id == ladder_id, Match.seed == seed)
    return (Match.id == match_id,)


def publish(session: Session, match_id: int, replay: dict[str, Any], stages: Stages = recorders.RATED) -> None:
    """Write what the match's replay says where pages, the API and the ratings read it: the named
    recorders of ``stages`` (seat results, live Elo, outcome store, standings, metrics, faults), in order."""
    recorders.run(session, stages, recorders.Published.load(session, match_id, replay))
    log.debug("match published", extra={"match_id": match_id, "game": replay["game"],
                                       "ranks": replay["result"]["ranks"]})
