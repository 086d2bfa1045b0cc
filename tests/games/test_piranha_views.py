"""What each seat sees: the redaction contract and the documented view fields."""

from __future__ import annotations

import json
import random

import pytest

from referee.games import get_game
from referee.games.piranha.cards import FULL_HAND
from tests.games.conformance_tools import assert_same_public_view, assert_same_view, canonical, random_actions
from tests.games.piranha_builders import ADVANCED, KOREAN, ORIGINAL, build, play

NAMES = [ORIGINAL, KOREAN, ADVANCED]


def _broken_round(name: str, pending_of_2: str):
    """Seat 0 falls first; seats 1 and 2 keep their committed cards unrevealed."""
    hands = [FULL_HAND, FULL_HAND, FULL_HAND]
    state = build(name, players=3, sombrero=0, phase="choose_card", pedro=(0, 4), board_stones=[(0, 4)],
                  stones=[4, 4, 4], hands=hands)
    return play(name, state, {0: "N1", 1: "E1", 2: pending_of_2})


@pytest.mark.parametrize("name", NAMES)
def test_another_seats_committed_card_is_invisible(name: str) -> None:
    """DECISIONS: the referee never sends another player's committed card before its reveal."""
    game = get_game(name)
    a, b = _broken_round(name, "W1"), _broken_round(name, "S3")
    assert a.pending[2] != b.pending[2]
    for seat in (0, 1):
        assert_same_view(game, a, b, seat)
    assert_same_public_view(game, a, b)
    # and the contract is not vacuous: the seat that committed the card does see it
    assert canonical(game.view(a, 2)) != canonical(game.view(b, 2))
    assert game.view(a, 2)["my_unrevealed"] == ["W1"]


@pytest.mark.parametrize("name", NAMES)
def test_random_states_with_other_commitments_swapped_look_the_same(name: str) -> None:
    """Over random matches, every broken move round: swap another seat's unrevealed card for another
    card of its hand; no other seat's view changes."""
    game = get_game(name)
    checked = 0
    for seed in range(300):
        rng = random.Random(seed)
        n = 2 + seed % 5
        state = game.initial_state(n, seed)
        while not game.is_terminal(state):
            if state.phase == "take_piranha":
                for owner in range(n):
                    if not state.pending[owner] or not state.hands[owner]:
                        continue
                    other = state.clone()
                    swap_out = state.pending[owner][0]
                    swap_in = sorted(state.hands[owner])[0]
                    pending = list(other.pending)
                    pending[owner] = (swap_in, *state.pending[owner][1:])
                    other.pending = tuple(pending)
                    hands = list(other.hands)
                    hands[owner] = (state.hands[owner] - {swap_in}) | {swap_out}
                    other.hands = tuple(hands)
                    for seat in range(n):
                        if seat != owner:
                            assert_same_view(game, state, other, seat)
                    assert_same_public_view(game, state, other)
                    checked += 1
            state = game.apply(state, random_actions(game, state, rng))
    assert checked > 50


def test_the_barrel_bag_order_is_seen_by_no_one() -> None:
    game = get_game(ADVANCED)
    state = game.initial_state(4, 11, {"barrels": [{"effect": "keep"}, {"effect": "logs", "amount": 2}] * 5})
    other = state.clone()
    other.barrel_bag = tuple(reversed(state.barrel_bag))
    for seat in range(4):
        assert_same_view(game, state, other, seat)
    assert_same_public_view(game, state, other)


@pytest.mark.parametrize("name", NAMES)
def test_view_holds_the_documented_fields(name: str) -> None:
    """Issue 2: pedro, hand, stones, piranhas_taken, board_stones, piranhas, sombrero, history."""
    game = get_game(name)
    state = game.initial_state(4, 2)
    view = game.view(state, 1)
    for key in ("pedro", "hand", "stones", "piranhas_taken", "board_stones", "piranhas", "sombrero",
                "history", "decision", "seat", "players", "board", "loss_threshold", "supply"):
        assert key in view, key
    assert view["pedro"] == [4, 4] and view["seat"] == 1
    json.loads(json.dumps(view))
    assert "hand" not in game.public_view(state) and "my_unrevealed" not in game.public_view(state)


def test_history_records_every_revealed_card_of_the_match() -> None:
    """DECISIONS: players have perfect memory: send the history of revealed cards."""
    game = get_game(ORIGINAL)
    state = build(ORIGINAL, players=3, sombrero=0, stones=[4, 4, 4])
    state = play(ORIGINAL, state, {0: "N1", 1: "S1", 2: "E1"})
    state = play(ORIGINAL, state, {0: "W1", 1: "N2", 2: "S2"})
    history = json.loads(json.dumps(game.view(state, 0)["history"]))
    assert history == [[1, 0, "N1", None], [1, 1, "S1", None], [1, 2, "E1", None],
                       [2, 1, "N2", None], [2, 2, "S2", None], [2, 0, "W1", None]]
    assert game.view(state, 2)["played"] == [["N1", "W1"], ["S1", "N2"], ["E1", "S2"]]


def test_regression_the_docs_example_view_could_not_happen() -> None:
    """docs/games/piranha-pedro.md showed a view whose history held one move round ending in a fall, yet
    whose ``move_round`` was 4 with three cards played by each seat since the last take-back (a fall clears
    them): bot authors read it as the protocol. It is now a view the engine gave (seed 3, random play), but
    for the board's rows, shortened."""
    import pathlib

    text = (pathlib.Path(__file__).parents[2] / "docs" / "games" / "piranha-pedro.md").read_text()
    start = text.index("### The view (what a seat receives)")
    opening = text.index("```json\n", start) + len("```json\n")
    shown = json.loads(text[opening:text.index("```\n", opening)])
    game = get_game(ORIGINAL)
    rng = random.Random(3)
    state = game.initial_state(3, 3)
    while game.view(state, 1)["move_round"] < shown["move_round"]:
        legal = {seat: game.legal_actions(state, seat) for seat in game.to_act(state)}
        state = game.apply(state, {seat: rng.choice(actions) for seat, actions in legal.items()})
    view = json.loads(json.dumps(game.view(state, 1)))
    assert shown["board"]["rows"][0] == view["board"]["rows"][0]
    shown["board"] |= {"name": view["board"]["name"], "rows": view["board"]["rows"]}
    view["board"] = {key: view["board"][key] for key in shown["board"]}
    assert shown == view
