"""The Pajarracos search player: legal answers within its time budget (turns and every follow-up
decision), sampled worlds that agree with the view, and choices that never depend on what it hides."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterator
from typing import Any

import pytest

from referee.games.pajarracos import PAJARRACOS as GAME
from referee.games.pajarracos.cards import sort_cards
from referee.games.pajarracos.scenario import DONE, build_state, crow, scarecrow, step
from referee.games.pajarracos.state import PajarracosState
from sample_bots import pajarracos_search
from sample_bots.search_bot import act_with
from sample_bots.search_core import budget_for


def _request(state: PajarracosState, deadline_ms: int = 1000) -> dict[str, Any]:
    seat = state.active
    return {"game": "pajarracos", "view": json.loads(json.dumps(GAME.view(state, seat))),
            "decision": GAME.decision(state, seat), "legal_actions": GAME.legal_actions(state, seat),
            "deadline_ms": deadline_ms, "time_bank_ms": 0}


def _decisions(players: int, seed: int) -> Iterator[PajarracosState]:
    params = {"allow_two_players": True} if players == 2 else None
    state = GAME.initial_state(players, seed, params)
    rng = random.Random(seed)
    while not GAME.is_terminal(state):
        yield state
        state = GAME.apply(state, {state.active: rng.choice(GAME.legal_actions(state, state.active))})


def _table() -> PajarracosState:
    """Seat 0: a crow on its big apple tree, two scarecrows, two crows; rivals with trees to attack."""
    return build_state(
        hands=["apples scarecrow scarecrow crow crow", "bananas grapes", "cherries oranges flock"],
        orchards=["apples=4 crow; grapes=2", "bananas=3; cherries=2", "oranges=3; grapes=1"],
        active=0,
    )


FOLLOW_UPS = {
    "turn": lambda: _table(),
    "more_crows": lambda: step(_table(), crow("crow", 1, "bananas")),
    "more_scarecrows": lambda: step(_table(), scarecrow("apples", "shoo_out")),
    "extra_action": lambda: step(_table(), scarecrow("apples", "shoo_out"), DONE),
}


@pytest.mark.parametrize("decision", sorted(FOLLOW_UPS))
def test_answers_follow_up_decisions_legally_within_its_budget(decision: str) -> None:
    state = FOLLOW_UPS[decision]()
    request = _request(state, deadline_ms=400)  # budget: 50% of 400 less 80 = 120 ms
    assert request["decision"] == decision
    started = time.perf_counter()
    action = act_with(request, random.Random(1), started)
    assert time.perf_counter() - started < 0.12 + 0.1
    assert action in request["legal_actions"]


@pytest.mark.parametrize("players", [3, 4, 6])
def test_answers_legally_within_the_default_budget_in_a_real_match(players: int) -> None:
    states = [s for i, s in enumerate(_decisions(players, seed=players)) if i in (4, 25)]
    for state in states:
        request = _request(state)
        started = time.perf_counter()
        action = act_with(request, random.Random(2), started)
        assert time.perf_counter() - started < 0.42 + 0.1
        assert action in request["legal_actions"]


@pytest.mark.parametrize("players", [2, 3, 5])
def test_sampled_worlds_agree_with_everything_the_view_shows(players: int) -> None:
    checked = 0
    for index, state in enumerate(_decisions(players, seed=10 + players)):
        if index % 4:
            continue
        view = json.loads(json.dumps(GAME.view(state, state.active)))
        world = pajarracos_search.build_world(view, random.Random(index))
        assert json.dumps(GAME.view(world, state.active), sort_keys=True) == json.dumps(view, sort_keys=True)
        assert GAME.conservation(world) == GAME.conservation(state)
        checked += 1
    assert checked > 5


def test_unseen_cards_are_the_deck_less_what_the_seat_sees() -> None:
    state = _table()
    unseen = pajarracos_search.unseen_cards(GAME.view(state, 0))
    assert sorted(unseen) == sorted([*state.hands[1], *state.hands[2], *state.reserve])


def _redealt(state: PajarracosState, rng: random.Random) -> PajarracosState:
    """The same table with the other hands and the reserve dealt differently (sizes kept)."""
    me = state.active
    cards = [c for s, hand in enumerate(state.hands) if s != me for c in hand] + list(state.reserve)
    rng.shuffle(cards)
    hands = list(state.hands)
    for s, hand in enumerate(state.hands):
        if s != me:
            hands[s], cards = sort_cards(cards[: len(hand)]), cards[len(hand):]
    other = state.clone()
    other.hands, other.reserve = tuple(hands), tuple(cards)
    return other


@pytest.mark.parametrize("index", [3, 20])
def test_choice_is_the_same_whatever_the_view_hides(index: int) -> None:
    state = next(s for i, s in enumerate(_decisions(4, seed=5)) if i == index)
    other = _redealt(state, random.Random(8))
    assert other.hands != state.hands and other.reserve != state.reserve
    assert GAME.view(other, state.active) == GAME.view(state, state.active)
    choices = []
    for table in (state, other):
        request = _request(table)
        choices.append(pajarracos_search.choose(request, random.Random(4), budget_for(request, max_iterations=24)))
    assert choices[0] == choices[1]


@pytest.mark.parametrize("players", [3, 4])
def test_turns_taken_counts_every_seats_finished_turns(players: int) -> None:
    finished = [0] * players
    previous = None
    for state in _decisions(players, seed=20 + players):
        if previous is not None and state.turn != previous.turn:
            finished[previous.active] += 1
        view = GAME.view(state, state.active)
        assert [pajarracos_search.turns_taken(view, s) for s in range(players) if s != state.active] == \
            [finished[s] for s in range(players) if s != state.active]
        previous = state


def test_an_opponent_that_scores_nothing_turn_after_turn_is_modelled_as_random() -> None:
    """Seat 1 has 0 points after 4 turns (a random player's pace), seat 2 has 6 (the heuristic's)."""
    view = {"players": 3, "seat": 0, "turn": 13, "scores": [5, 0, 6]}
    odds = pajarracos_search.opponent_odds(view)
    assert odds[1] > 0.95 and odds[2] < 0.05
    first = pajarracos_search.opponent_odds({"players": 3, "seat": 0, "turn": 1, "scores": [0, 0, 0]})
    assert 0.5 < first[1] == first[2] < 0.75  # nothing seen yet: about even odds
