"""Void matches: every seat forfeited before playing a move of its own.

Such a match's ranks come from the referee's seeded random default play alone, so rating it would move
Elo, leaderboards and tournament standings on dice rolls. It is recorded (status ``void``, the reason in
``error``, the replay, each seat's faults for its owner) and never rated; it still counts as done for
its tournament's progress and finishing. What it writes: ``recorders.VOID``.
"""

from __future__ import annotations

from typing import Any

VOID_REASON = "every seat forfeited before playing a move of its own; the match is not rated"


def void_reason(replay: dict[str, Any]) -> str | None:
    """Why the match is void, or None when at least one seat played (or none forfeited)."""
    result = replay["result"]
    players = len(result["ranks"])
    if players == 0 or len(set(result.get("forfeited", ()))) < players:
        return None
    played = any(not decision["default"] for step in replay["steps"] for decision in step["decisions"])
    return None if played else VOID_REASON
