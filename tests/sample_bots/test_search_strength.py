"""The search player beats the heuristic in a short seeded in-process series in every game.

Each seed is played once from every seat with the search player in it and heuristic players in the
others (duplicate play: the same deals from every side). The search runs on an iteration cap instead
of the clock, so the series is reproducible whatever the machine's load; the caps are a fraction of
what 520 ms buys, to keep the series short. ``python -m bench.search_strength`` measures the real
thing: a tournament over HTTP at the default time limit.
"""

from __future__ import annotations

import json
import random

import pytest

from referee.games import GAMES, get_game
from sample_bots.heuristic_bot import STRATEGIES
from sample_bots.search_bot import SEARCHES
from sample_bots.search_core import budget_for

# game -> (players, seeds, iterations per decision); about 5-10 s each on the project's 2-core machine.
# The advanced game plays seed 2 only: its seed 1 match runs long (25 s), and won as well.
CASES = {
    "piranha-pedro": (2, (1, 2), 60),
    "piranha-pedro-ko": (2, (1, 2), 60),
    "piranha-pedro-ko-advanced": (2, (2,), 60),
}
#: Pajarracos decisions cost more (every opponent turn of a playout is the heuristic's): ~40 s, slow.
PAJARRACOS = (3, (1, 2), 40)


def _series_score(game_name: str, players: int, seeds: tuple[int, ...], iterations: int) -> tuple[float, int]:
    """The search seat's pairwise score against the heuristic seats (win 1, shared placing 1/2), summed."""
    game = get_game(game_name)
    total, played = 0.0, 0
    for seed in seeds:
        for seat in range(players):
            rngs = [random.Random(seed * 7 + s) for s in range(players)]
            state = game.initial_state(players, seed)
            while not game.is_terminal(state):
                actions = {}
                for s in sorted(game.to_act(state)):
                    request = {"game": game_name, "view": json.loads(json.dumps(game.view(state, s))),
                               "decision": game.decision(state, s), "legal_actions": game.legal_actions(state, s),
                               "deadline_ms": 1000}
                    if s == seat:
                        budget = budget_for(request, max_iterations=iterations)
                        actions[s] = SEARCHES[game_name](request, rngs[s], budget, None)
                    else:
                        actions[s] = STRATEGIES[game_name](request, rngs[s])
                state = game.apply(state, actions)
            ranks = game.result(state)["ranks"]
            total += sum(1.0 if ranks[seat] < ranks[o] else 0.5 if ranks[seat] == ranks[o] else 0.0
                         for o in range(players) if o != seat) / (players - 1)
            played += 1
    return total, played


def test_every_registered_game_has_a_search_and_a_case_here() -> None:
    assert set(SEARCHES) == set(GAMES) == {*CASES, "pajarracos"}


@pytest.mark.parametrize("game_name", sorted(CASES))
def test_search_beats_the_heuristic_at_piranha_pedro(game_name: str) -> None:
    players, seeds, iterations = CASES[game_name]
    score, played = _series_score(game_name, players, seeds, iterations)
    assert score > played / 2, f"{game_name}: search scored {score} of {played} against the heuristic"


@pytest.mark.slow
def test_search_beats_the_heuristic_at_pajarracos() -> None:
    score, played = _series_score("pajarracos", *PAJARRACOS)
    assert score > played / 2, f"pajarracos: search scored {score} of {played} against the heuristic"
