"""A match's final placings: the game's result, with forfeited seats moved to the worst placing."""

from __future__ import annotations

from typing import Any

from referee.games.base import competition_ranks


def final_result(game_result: dict[str, list], forfeited: list[int]) -> dict[str, Any]:
    """Forfeited seats share the worst placing; the others keep their order from the game."""
    ranks = list(game_result["ranks"])
    if forfeited:
        out = set(forfeited)
        ranks = competition_ranks([(0 if seat in out else 1, -rank) for seat, rank in enumerate(ranks)])
    return {
        "ranks": ranks,
        "scores": list(game_result["scores"]),
        "game_ranks": list(game_result["ranks"]),
        "forfeited": sorted(forfeited),
    }
