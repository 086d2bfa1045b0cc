"""The Piranha Pedro search player: legal answers within its time budget in every decision kind,
sampled worlds that agree with the view, and choices that never depend on what the view hides."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterator
from typing import Any

import pytest

from referee.games import get_game
from referee.games.piranha.state import PiranhaState
from sample_bots import piranha_search
from sample_bots.search_bot import act_with
from sample_bots.search_core import budget_for

GAMES = ("piranha-pedro", "piranha-pedro-ko", "piranha-pedro-ko-advanced")


def _request(game_name: str, state: PiranhaState, seat: int, deadline_ms: int = 1000) -> dict[str, Any]:
    game = get_game(game_name)
    return {"game": game_name, "view": json.loads(json.dumps(game.view(state, seat))),
            "decision": game.decision(state, seat), "legal_actions": game.legal_actions(state, seat),
            "deadline_ms": deadline_ms, "time_bank_ms": 0}


def _decisions(game_name: str, players: int, seed: int) -> Iterator[tuple[PiranhaState, int]]:
    """Every (state, seat) asked for a decision in a seeded random match."""
    game = get_game(game_name)
    state = game.initial_state(players, seed)
    rng = random.Random(seed)
    while not game.is_terminal(state):
        for seat in sorted(game.to_act(state)):
            yield state, seat
        state = game.apply(state, {s: rng.choice(game.legal_actions(state, s)) for s in game.to_act(state)})


def _first(game_name: str, players: int, decision: str, need: Any = None) -> tuple[PiranhaState, int]:
    for seed in range(40):
        for state, seat in _decisions(game_name, players, seed):
            if state.phase == decision and (need is None or need(state, seat)):
                return state, seat
    raise AssertionError(f"no {decision} found")


def _hidden_pending(state: PiranhaState, seat: int) -> bool:
    """A fall left another seat's committed card unrevealed."""
    return any(state.pending[s] for s in range(state.num_players) if s != seat)


CASES = [
    ("piranha-pedro", 2, "choose_card", None),
    ("piranha-pedro", 4, "choose_card", None),
    ("piranha-pedro", 3, "take_piranha", None),
    ("piranha-pedro-ko", 2, "choose_card", None),  # both seats commit two cards
    ("piranha-pedro-ko", 2, "move_piranha", None),
    ("piranha-pedro-ko", 2, "take_piranha", _hidden_pending),
    ("piranha-pedro-ko-advanced", 2, "choose_card", lambda s, _: len(s.barrel_log) > 0),
    ("piranha-pedro-ko-advanced", 5, "choose_card", None),
    ("piranha-pedro-ko-advanced", 2, "take_piranha", None),
]


@pytest.mark.parametrize(("game_name", "players", "decision", "need"), CASES)
def test_answers_legally_within_its_budget(game_name: str, players: int, decision: str, need: Any) -> None:
    state, seat = _first(game_name, players, decision, need)
    request = _request(game_name, state, seat, deadline_ms=400)  # budget: 50% of 400 less 80 = 120 ms
    started = time.perf_counter()
    action = act_with(request, random.Random(1), started)
    elapsed = time.perf_counter() - started
    assert action in request["legal_actions"]
    assert elapsed < 0.12 + 0.1, f"{elapsed:.3f} s"


def test_the_default_limit_worst_case_stays_inside_its_budget() -> None:
    """Two-player Korean advanced, a full hand: 132 ordered pairs, the heaviest decision there is."""
    state, seat = _first("piranha-pedro-ko-advanced", 2, "choose_card", lambda s, _: s.move_round == 1)
    request = _request("piranha-pedro-ko-advanced", state, seat)
    assert len(request["legal_actions"]) == 132
    started = time.perf_counter()
    action = act_with(request, random.Random(2), started)
    assert time.perf_counter() - started < 0.42 + 0.1
    assert action in request["legal_actions"]


@pytest.mark.parametrize("game_name", GAMES)
@pytest.mark.parametrize("players", [2, 3, 6])
def test_sampled_worlds_agree_with_everything_the_view_shows(game_name: str, players: int) -> None:
    game = get_game(game_name)
    checked = 0
    for index, (state, seat) in enumerate(_decisions(game_name, players, seed=players)):
        if index % 3:
            continue
        view = json.loads(json.dumps(game.view(state, seat)))
        world = piranha_search.build_world(game, view, random.Random(index))
        assert json.dumps(game.view(world, seat), sort_keys=True) == json.dumps(view, sort_keys=True)
        assert game.conservation(world) == game.conservation(state)
        checked += 1
    assert checked > 3


def _with_other_hidden(state: PiranhaState, seat: int, rng: random.Random) -> PiranhaState:
    """The same table with the other seats' unrevealed cards (and the barrel bag's order) changed."""
    other = state.clone()
    hands, pending = list(other.hands), list(other.pending)
    for s in range(state.num_players):
        if s != seat and pending[s]:
            pool = sorted(hands[s] | set(pending[s]))
            new = tuple(rng.sample(pool, len(pending[s])))
            pending[s], hands[s] = new, frozenset(pool) - set(new)
    other.hands, other.pending = tuple(hands), tuple(pending)
    other.barrel_bag = tuple(rng.sample(other.barrel_bag, len(other.barrel_bag)))
    return other


@pytest.mark.parametrize(("game_name", "players"), [("piranha-pedro-ko", 2), ("piranha-pedro-ko-advanced", 3)])
def test_choice_is_the_same_whatever_the_view_hides(game_name: str, players: int) -> None:
    game = get_game(game_name)
    state, seat = _first(game_name, players, "take_piranha", _hidden_pending)
    other = _with_other_hidden(state, seat, random.Random(9))
    assert other.pending != state.pending or other.barrel_bag != state.barrel_bag
    assert game.view(other, seat) == game.view(state, seat)  # the engine's own contract
    choices = []
    for table in (state, other):
        request = _request(game_name, table, seat)
        choices.append(piranha_search.choose(request, random.Random(4), budget_for(request, max_iterations=60)))
    assert choices[0] == choices[1]


def test_a_fixed_seed_and_iteration_cap_give_the_same_answer() -> None:
    state, seat = _first("piranha-pedro-ko", 2, "choose_card", lambda s, _: s.move_round > 2)
    request = _request("piranha-pedro-ko", state, seat)
    answers = {json.dumps(piranha_search.choose(request, random.Random(7), budget_for(request, max_iterations=80)))
               for _ in range(2)}
    assert len(answers) == 1


def test_p_loses_is_a_distribution_over_the_seats() -> None:
    for counts, threshold in [((0, 0), 3), ((1, 2), 3), ((0, 1, 0, 1), 2), ((0,) * 6, 2)]:
        total = sum(piranha_search._p_loses(counts, threshold, s) for s in range(len(counts)))
        assert total == pytest.approx(1.0)
    assert piranha_search._p_loses((2, 0), 3, 0) > 0.5 > piranha_search._p_loses((2, 0), 3, 1)


def test_worlds_follow_the_barrel_table_of_the_match() -> None:
    """The advanced game's barrels come from /start's params: worlds built with them agree with the
    draws seen, and keep the right number of each kind in the bag."""
    game = get_game("piranha-pedro-ko-advanced")
    params = {"barrels": [{"effect": "keep"}] * 9 + [{"effect": "logs", "amount": 2}] * 18}
    state = game.initial_state(2, 4, params)
    rng = random.Random(4)
    while len(state.barrel_log) < 3:
        state = game.apply(state, {s: rng.choice(game.legal_actions(state, s)) for s in game.to_act(state)})
        assert not game.is_terminal(state)
    seat = min(game.to_act(state))
    view = json.loads(json.dumps(game.view(state, seat)))
    world = piranha_search.build_world(game, view, random.Random(1), params)
    assert json.dumps(game.view(world, seat), sort_keys=True) == json.dumps(view, sort_keys=True)
    kinds = sorted(params["barrels"][i]["effect"] for i in world.barrel_bag)
    assert kinds == sorted(params["barrels"][i]["effect"] for i in state.barrel_bag)
