"""Void matches: every seat forfeited before playing a move of its own.

Such a match's ranks come from the referee's seeded random default play alone, so rating it would move
Elo, leaderboards and tournament standings on dice rolls. It is recorded (status ``void``, the reason in
``error``, the replay, each seat's faults for its owner) and never rated; it still counts as done for
its tournament's progress and finishing.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from arena.services.metrics import FAULTS, increment
from arena.storage.models import Fault, MatchSeat

VOID_REASON = "every seat forfeited before playing a move of its own; the match is not rated"


def void_reason(replay: dict[str, Any]) -> str | None:
    """Why the match is void, or None when at least one seat played (or none forfeited)."""
    result = replay["result"]
    players = len(result["ranks"])
    if players == 0 or len(set(result.get("forfeited", ()))) < players:
        return None
    played = any(not decision["default"] for step in replay["steps"] for decision in step["decisions"])
    return None if played else VOID_REASON


def record_void_seats(session: Session, match_id: int, replay: dict[str, Any]) -> None:
    """Seat rows (forfeited, fault counts; no rank or score) and fault rows, in the recording
    transaction; nothing that rates: no live Elo, outcome, standings or matches-played counter."""
    seats = {row.seat: row for row in session.scalars(select(MatchSeat).where(MatchSeat.match_id == match_id))}
    for seat, row in seats.items():
        row.rank, row.score, row.forfeited = None, None, True
        row.decisions = 0
        row.faults = sum(1 for f in replay["faults"] if f["seat"] == seat)
    kinds: dict[tuple[str, str], float] = {}
    for fault in replay["faults"]:
        session.add(Fault(match_id=match_id, bot_id=seats[fault["seat"]].bot_id, seat=fault["seat"],
                          turn=fault["turn"], path=fault["path"], kind=fault["kind"],
                          message=fault["message"][:2000], excerpt=fault["excerpt"][:1000],
                          latency_ms=fault["latency_ms"]))
        key = (FAULTS, f"kind={fault['kind']}")
        kinds[key] = kinds.get(key, 0) + 1
    if kinds:
        increment(session, kinds)
