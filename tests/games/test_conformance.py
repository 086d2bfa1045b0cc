"""One conformance test for every registered game (after OpenSpiel's generic random-simulation test)."""

from __future__ import annotations

import json
import random

import pytest

from referee.errors import RulesError
from referee.games import GAMES, get_game
from tests.games.conformance_tools import play_random, random_actions, snapshot

GAME_NAMES = sorted(GAMES)


def _player_counts(name: str) -> list[int]:
    spec = GAMES[name].spec
    return list(range(spec.min_players, spec.max_players + 1))


@pytest.mark.parametrize("name", GAME_NAMES)
def test_random_matches_keep_every_invariant(name: str) -> None:
    """Thousands of seeded random matches: always end, someone acts until the end, every acting seat
    has a legal action, inputs are never mutated, views are JSON, conserved counts never change."""
    game = get_game(name)
    matches = 0
    counts = _player_counts(name)
    per_count = -(-1000 // len(counts))
    for num_players in counts:
        for seed in range(per_count):
            rng = random.Random(seed)
            state = game.initial_state(num_players, seed)
            conserved = game.conservation(state)
            check_deep = seed < 8  # deep-copy snapshots are slow; prove non-mutation on a sample
            steps = 0
            while not game.is_terminal(state):
                acting = game.to_act(state)
                assert acting, "to_act must be non-empty until the match is over"
                for seat in acting:
                    assert game.legal_actions(state, seat), f"seat {seat} has no legal action"
                    assert isinstance(game.decision(state, seat), str)
                views = [json.dumps(game.view(state, seat)) for seat in range(num_players)]
                json.dumps(game.public_view(state))
                before = snapshot(state) if check_deep else None
                actions = random_actions(game, state, rng)
                new = game.apply(state, actions)
                if check_deep:
                    assert snapshot(state) == before, "apply mutated its input"
                    assert [json.dumps(game.view(state, s)) for s in range(num_players)] == views
                state = new
                assert game.conservation(state) == conserved
                steps += 1
                assert steps < 100_000
            assert game.to_act(state) == frozenset()
            result = game.result(state)
            assert len(result["ranks"]) == len(result["scores"]) == num_players
            assert min(result["ranks"]) == 1
            assert all(1 <= r <= num_players for r in result["ranks"])
            json.dumps(game.public_view(state))
            matches += 1
    assert matches >= 1000


@pytest.mark.parametrize("name", GAME_NAMES)
def test_same_seed_and_actions_give_the_same_match(name: str) -> None:
    game = get_game(name)
    n = GAMES[name].spec.min_players + 1
    final_a, log_a = play_random(game, n, seed=42)
    final_b, log_b = play_random(game, n, seed=42)
    assert log_a == log_b
    assert json.dumps(game.public_view(final_a)) == json.dumps(game.public_view(final_b))
    state = game.initial_state(n, 42)
    for actions in log_a:
        state = game.apply(state, actions)
    assert game.result(state) == game.result(final_a)


@pytest.mark.parametrize("name", GAME_NAMES)
def test_different_seeds_give_different_matches(name: str) -> None:
    game = get_game(name)
    n = GAMES[name].spec.min_players + 1
    publics = {json.dumps(game.public_view(play_random(game, n, seed)[0])) for seed in range(10)}
    assert len(publics) > 1


@pytest.mark.parametrize("name", GAME_NAMES)
def test_illegal_missing_and_extra_actions_are_refused(name: str) -> None:
    game = get_game(name)
    state = game.initial_state(GAMES[name].spec.min_players + 1, 3)
    acting = sorted(game.to_act(state))
    with pytest.raises(RulesError):
        game.apply(state, {})
    legal = {seat: game.legal_actions(state, seat)[0] for seat in acting}
    with pytest.raises(RulesError):
        game.apply(state, {**legal, 99: legal[acting[0]]})
    with pytest.raises(RulesError):
        game.apply(state, {**legal, acting[0]: {"not": "an action"}})
    with pytest.raises(RulesError):
        game.apply(state, {**legal, acting[0]: "garbage"})


@pytest.mark.parametrize("name", GAME_NAMES)
def test_player_counts_outside_the_spec_are_refused(name: str) -> None:
    game = get_game(name)
    with pytest.raises(RulesError):
        game.initial_state(game.spec.max_players + 1, 1)
    with pytest.raises(RulesError):
        game.initial_state(1, 1)


@pytest.mark.parametrize("name", GAME_NAMES)
def test_result_before_the_end_is_refused(name: str) -> None:
    game = get_game(name)
    with pytest.raises(RulesError):
        game.result(game.initial_state(game.spec.min_players, 1))


def test_unknown_game_names_the_known_ones() -> None:
    with pytest.raises(RulesError, match="known games"):
        get_game("chess")


@pytest.mark.parametrize("name", GAME_NAMES)
def test_views_of_a_step_equal_each_seats_own_view(name: str) -> None:
    """``views`` (the referee's call for a step's acting seats; Piranha Pedro builds the public part once)
    gives byte for byte what ``view`` gives each seat, and in the same key order; also when handed the
    public view the spectators' step was built from."""
    game = get_game(name)
    for num_players in _player_counts(name):
        for seed in range(3):
            rng = random.Random(seed)
            state = game.initial_state(num_players, seed)
            while True:
                seats = list(range(num_players))
                together = game.views(state, seats)
                own = [json.dumps(game.view(state, s)) for s in seats]
                assert [json.dumps(together[s]) for s in seats] == own
                built_on = game.views(state, seats, game.public_view(state))  # the referee's, with spectators
                assert [json.dumps(built_on[s]) for s in seats] == own
                if game.is_terminal(state):
                    break
                state = game.apply(state, random_actions(game, state, rng))
