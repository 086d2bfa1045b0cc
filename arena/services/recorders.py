"""What publishing a match writes, as a list of named recorders run in order in one transaction (as a
Battlesnake ruleset is a list of named stages): each takes the session and the ``Published`` match, and
each can be run and tested alone. ``RATED`` serves a played match, ``VOID`` a match in which every seat
forfeited before playing (recorded for its owners, never rated: ``void_matches``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from arena.services import latency, standings
from arena.services.leaderboards import update_live
from arena.services.metrics import FAULTS, count_match, increment
from arena.services.outcome_store import store_outcome
from arena.services.rating_history import add_live_points
from arena.storage.models import Fault, Match, MatchSeat


@dataclass
class Published:
    """A match being published: its replay, its seat rows in seat order and its decision latencies."""

    match_id: int
    tournament_id: int | None
    replay: dict[str, Any]
    seats: list[MatchSeat]
    latencies: dict[int, list[float]] = field(default_factory=dict)

    @property
    def game(self) -> str:
        return self.replay["game"]

    @property
    def result(self) -> dict[str, Any]:
        return self.replay["result"]

    @classmethod
    def load(cls, session: Session, match_id: int, replay: dict[str, Any]) -> Published:
        seats = list(session.scalars(select(MatchSeat).where(MatchSeat.match_id == match_id)
                                     .order_by(MatchSeat.seat)))
        tournament_id = session.scalar(select(Match.tournament_id).where(Match.id == match_id))
        latencies: dict[int, list[float]] = {}
        for step in replay["steps"]:
            for decision in step["decisions"]:
                if decision["latency_ms"] is not None:
                    latencies.setdefault(decision["seat"], []).append(decision["latency_ms"])
        return cls(match_id, tournament_id, replay, seats, latencies)

    def faults_of(self, seat: int) -> int:
        return sum(1 for f in self.replay["faults"] if f["seat"] == seat)


Recorder = Callable[[Session, Published], None]


def seat_results(session: Session, match: Published) -> None:
    """Rank, score, forfeit, decisions, faults and latency on each seat row (bot pages read these)."""
    result = match.result
    for row in match.seats:
        samples = match.latencies.get(row.seat, [])
        row.rank = result["ranks"][row.seat]
        row.score = float(result["scores"][row.seat])
        row.forfeited = row.seat in result["forfeited"]
        row.decisions = sum(1 for s in match.replay["steps"] for d in s["decisions"] if d["seat"] == row.seat)
        row.faults = match.faults_of(row.seat)
        row.latency_sum_ms = round(sum(samples), 3)
        row.latency_max_ms = round(max(samples, default=0.0), 3)
        row.latency_hist = latency.histogram(samples)


def live_elo(session: Session, match: Published) -> None:
    update_live(session, match.game, [row.bot_id for row in match.seats], match.result)


def live_points(session: Session, match: Published) -> None:
    """The rating chart's point for this match: each seat's live Elo after it (``rating_history``)."""
    session.flush()  # the live Elo rows the stage before changed
    add_live_points(session, match.game, match.match_id, [row.bot_id for row in match.seats])


def outcome_store(session: Session, match: Published) -> None:
    store_outcome(session, match.match_id, match.game, match.seats)


def tournament_standings(session: Session, match: Published) -> None:
    if match.tournament_id is not None:
        standings.add_match(session, match.tournament_id, match.game, match.seats)


def match_metrics(session: Session, match: Published) -> None:
    samples = [x for seat in match.latencies.values() for x in seat]
    count_match(session, match.game, [f["kind"] for f in match.replay["faults"]], latency.histogram(samples),
                sum(samples))


def fault_rows(session: Session, match: Published) -> None:
    """One row per fault, for the bot's owner (message and excerpt) and the fault tables."""
    bot_of = {row.seat: row.bot_id for row in match.seats}
    for fault in match.replay["faults"]:
        session.add(Fault(match_id=match.match_id, bot_id=bot_of[fault["seat"]], seat=fault["seat"],
                          turn=fault["turn"], path=fault["path"], kind=fault["kind"],
                          message=fault["message"][:2000], excerpt=fault["excerpt"][:1000],
                          latency_ms=fault["latency_ms"]))


def void_seats(session: Session, match: Published) -> None:
    """Every seat forfeited, with its fault count; no rank, score or decisions (nothing to rate)."""
    for row in match.seats:
        row.rank, row.score, row.forfeited, row.decisions = None, None, True, 0
        row.faults = match.faults_of(row.seat)


def fault_metrics(session: Session, match: Published) -> None:
    """The fault-kind counters alone (a void match is no match played)."""
    kinds: dict[tuple[str, str], float] = {}
    for fault in match.replay["faults"]:
        key = (FAULTS, f"kind={fault['kind']}")
        kinds[key] = kinds.get(key, 0) + 1
    if kinds:
        increment(session, kinds)


# The first stage writes the seat rows that the later ones read (live Elo, outcome store, standings).
RATED: tuple[tuple[str, Recorder], ...] = (
    ("seat results", seat_results),
    ("live Elo", live_elo),
    ("live points", live_points),
    ("outcome store", outcome_store),
    ("tournament standings", tournament_standings),
    ("metrics", match_metrics),
    ("faults", fault_rows),
)
VOID: tuple[tuple[str, Recorder], ...] = (
    ("void seats", void_seats),
    ("faults", fault_rows),
    ("fault metrics", fault_metrics),
)


def run(session: Session, recorders: tuple[tuple[str, Recorder], ...], match: Published) -> None:
    for _name, recorder in recorders:
        recorder(session, match)
