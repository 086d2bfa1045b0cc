"""A deal stays secret until every match that plays it is over; then its matches are published.

The rotations of a table share one seed (duplicate play), so one match's replay, seed or result tells
about the hands still hidden in its twins. A match played while another match of its deal is still
queued or running is therefore *sealed*: its replay and result are stored in its row, but nothing
derived from them is written where anyone can read it (seat results, faults, live and fitted ratings,
tournament standings, metrics), and reads show neither its seed nor its result (``is_public``). When the
deal's last open match ends (recorded, cancelled or failed to start), ``close_deal`` publishes every
sealed match of the deal in id order: the same fan-out a match gets at once when its deal is closed (or,
for a void match, where every seat forfeited before playing, only its seats' faults: never rated).

A deal is the matches of one tournament that share a seed; a match outside any tournament is its own deal.
Callers hold the leaderboard's write lock (``lock_board``) before ``close_deal``, so of two twins
recorded at the same moment the second sees the first sealed and publishes both (no write skew).
"""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from arena.services import latency, standings
from arena.services.leaderboards import lock_board, store_outcome, update_live
from arena.services.metrics import count_match
from arena.services.replay_store import decompress
from arena.services.void_matches import record_void_seats, void_reason
from arena.storage.models import Fault, Match, MatchSeat, MatchStatus

log = logging.getLogger("arena.matches")

OPEN = (MatchStatus.QUEUED, MatchStatus.RUNNING)


def is_public(status: str) -> bool:
    """Whether a match's seed, result and replay may be shown: only once its whole deal is over."""
    return status in (MatchStatus.FINISHED, MatchStatus.VOID)


def close_deal(session: Session, match_id: int) -> list[int]:
    """Publish the sealed matches of ``match_id``'s deal if none of its matches is open any more; returns
    the published ids. Takes the leaderboard's lock first (see the module docstring)."""
    row = session.execute(select(Match.tournament_id, Match.seed, Match.game, Match.num_players)
                          .where(Match.id == match_id)).first()
    if row is None:
        return []
    lock_board(session, row.game, row.num_players)
    deal = (Match.id == match_id,) if row.tournament_id is None else (Match.tournament_id == row.tournament_id,
                                                                      Match.seed == row.seed)
    if session.scalar(select(func.count()).select_from(Match).where(*deal, Match.status.in_(OPEN))):
        return []
    published = []
    for sealed_id in session.scalars(select(Match.id).where(*deal, Match.status == MatchStatus.SEALED)
                                     .order_by(Match.id)).all():
        replay = decompress(session.scalar(select(Match.replay_gz).where(Match.id == sealed_id)))
        void = void_reason(replay)
        done = session.execute(update(Match).where(Match.id == sealed_id, Match.status == MatchStatus.SEALED)
                               .values(status=MatchStatus.VOID if void else MatchStatus.FINISHED, error=void)
                               .execution_options(synchronize_session=False))
        if done.rowcount != 1:
            continue
        if void:  # recorded, never rated (``void_matches``)
            record_void_seats(session, sealed_id, replay)
        else:
            publish(session, sealed_id, replay)
        published.append(sealed_id)
    return published


def publish(session: Session, match_id: int, replay: dict[str, Any]) -> None:
    """Write what the match's replay says where pages, the API and the ratings read it: seat results,
    live Elo, the leaderboard's outcome store, tournament standings, metrics and faults."""
    result = replay["result"]
    seats = {row.seat: row for row in session.scalars(select(MatchSeat).where(MatchSeat.match_id == match_id))}
    per_seat = _seat_latencies(replay)
    for seat, row in seats.items():
        samples = per_seat.get(seat, [])
        row.rank = result["ranks"][seat]
        row.score = float(result["scores"][seat])
        row.forfeited = seat in result["forfeited"]
        row.decisions = sum(1 for s in replay["steps"] for d in s["decisions"] if d["seat"] == seat)
        row.faults = sum(1 for f in replay["faults"] if f["seat"] == seat)
        row.latency_sum_ms = round(sum(samples), 3)
        row.latency_max_ms = round(max(samples, default=0.0), 3)
        row.latency_hist = latency.histogram(samples)
    in_order = [seats[i] for i in sorted(seats)]
    update_live(session, replay["game"], [seat.bot_id for seat in in_order], result)  # takes the board's lock
    store_outcome(session, match_id, replay["game"], in_order)
    tournament_id = session.scalar(select(Match.tournament_id).where(Match.id == match_id))
    if tournament_id is not None:
        standings.add_match(session, tournament_id, replay["game"], in_order)
    all_samples = [x for samples in per_seat.values() for x in samples]
    count_match(session, replay["game"], [f["kind"] for f in replay["faults"]], latency.histogram(all_samples),
                sum(all_samples))
    for fault in replay["faults"]:
        session.add(Fault(match_id=match_id, bot_id=seats[fault["seat"]].bot_id, seat=fault["seat"],
                          turn=fault["turn"], path=fault["path"], kind=fault["kind"],
                          message=fault["message"][:2000], excerpt=fault["excerpt"][:1000],
                          latency_ms=fault["latency_ms"]))
    log.debug("match published", extra={"match_id": match_id, "game": replay["game"],
                                       "ranks": result["ranks"]})


def _seat_latencies(replay: dict[str, Any]) -> dict[int, list[float]]:
    out: dict[int, list[float]] = {}
    for step in replay["steps"]:
        for d in step["decisions"]:
            if d["latency_ms"] is not None:
                out.setdefault(d["seat"], []).append(d["latency_ms"])
    return out
