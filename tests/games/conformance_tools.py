"""Shared tools for the game tests: random play, state snapshots and the redaction assertion."""

from __future__ import annotations

import copy
import json
import pickle
import random
from typing import Any

from referee.games.base import Game


def canonical(view: dict[str, Any]) -> bytes:
    """The bytes a bot would receive for ``view``."""
    return json.dumps(view, sort_keys=True, separators=(",", ":")).encode()


def assert_same_view(game: Game, state_a: Any, state_b: Any, seat: int) -> None:
    """The redaction contract: states that differ only in what ``seat`` cannot see look identical."""
    assert canonical(game.view(state_a, seat)) == canonical(game.view(state_b, seat))


def assert_same_public_view(game: Game, state_a: Any, state_b: Any) -> None:
    assert canonical(game.public_view(state_a)) == canonical(game.public_view(state_b))


def snapshot(state: Any) -> bytes:
    """A deep fingerprint of a state, to prove that nothing mutated it."""
    return pickle.dumps(copy.deepcopy(state))


def random_actions(game: Game, state: Any, rng: random.Random) -> dict[int, Any]:
    return {seat: rng.choice(game.legal_actions(state, seat)) for seat in sorted(game.to_act(state))}


def play_random(game: Game, num_players: int, seed: int, params: dict | None = None, max_steps: int = 100_000):
    """Play one match with random legal actions; returns (final state, list of action dicts)."""
    rng = random.Random(seed * 7919 + num_players)
    state = game.initial_state(num_players, seed, params)
    actions_log = []
    for _ in range(max_steps):
        if game.is_terminal(state):
            return state, actions_log
        actions = random_actions(game, state, rng)
        actions_log.append(actions)
        state = game.apply(state, actions)
    raise AssertionError(f"{game.spec.name} did not end within {max_steps} steps")
