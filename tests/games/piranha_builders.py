"""Build Piranha Pedro states for scenario tests: start from a real setup, then set the fields a
scenario needs."""

from __future__ import annotations

from typing import Any

from referee.games import get_game
from referee.games.piranha.cards import FULL_HAND
from referee.games.piranha.state import PiranhaState

ORIGINAL = "piranha-pedro"
KOREAN = "piranha-pedro-ko"
ADVANCED = "piranha-pedro-ko-advanced"


def build(game_name: str = ORIGINAL, players: int = 3, seed: int = 0, params: dict | None = None,
          **fields: Any) -> PiranhaState:
    """A state of ``game_name`` with ``fields`` replaced (cells as tuples, hands as card lists)."""
    game = get_game(game_name)
    state = game.initial_state(players, seed, params)
    state = state.clone()
    for name, value in fields.items():
        if name == "hands":
            value = tuple(frozenset(h) for h in value)
        elif name in {"board_stones"}:
            value = frozenset(tuple(c) for c in value)
        elif name == "piranhas":
            value = tuple(sorted(tuple(c) for c in value))
        elif name in {"pedro", "stones", "scores", "kept_barrels"}:
            value = tuple(value)
        elif name == "taken":
            value = tuple(tuple(tuple(c) for c in t) for t in value)
        setattr(state, name, value)
    return state


def hands_without(players: int, *removed: list[str]) -> list[frozenset[str]]:
    """Full hands minus the given cards per seat."""
    return [FULL_HAND - set(removed[s] if s < len(removed) else []) for s in range(players)]


def play(game_name: str, state: PiranhaState, actions: dict[int, Any]) -> PiranhaState:
    return get_game(game_name).apply(state, actions)
