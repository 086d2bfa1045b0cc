"""Pajarracos setup: the deck, the deal, the starting seat, parameters and player counts."""

from __future__ import annotations

from collections import Counter

import pytest

from referee.errors import RulesError
from referee.games import GAMES
from referee.games.pajarracos import PAJARRACOS as GAME
from referee.games.pajarracos.cards import CROW, FLOCK, FRUITS, SCARECROW, juicy


def all_cards(state) -> Counter:
    counts = Counter(state.reserve) + Counter(state.discard)
    for hand in state.hands:
        counts.update(hand)
    for orchard in state.orchards:
        for tree in orchard:
            counts.update(tree.cards)
    return counts


def test_registered_with_its_spec() -> None:
    spec = GAMES["pajarracos"].spec
    assert (spec.title, spec.min_players, spec.max_players) == ("Pajarracos", 3, 6)
    assert not spec.simultaneous and spec.hidden_information and spec.ranking == "ranked"
    assert "RECONSTRUCTION" in spec.description


def test_components_are_65_cards() -> None:
    """Rulebook, Components: 45 fruit cards, 10 scarecrow cards, 10 crow cards (8 single crows and
    2 flocks). DECISIONS §2: 9 cards of each of 5 fruits; 1 juicy + 8 ordinary per fruit
    (RECONSTRUCTION, a parameter)."""
    counts = all_cards(GAME.initial_state(4, 1))
    assert sum(counts.values()) == 65
    assert (counts[SCARECROW], counts[CROW], counts[FLOCK]) == (10, 8, 2)
    for fruit in FRUITS:
        assert (counts[fruit], counts[juicy(fruit)]) == (8, 1)


@pytest.mark.parametrize("juicy_param, expected", [(0, (9, 0)), (3, (6, 3)), (9, (0, 9))])
def test_juicy_count_is_a_parameter(juicy_param: int, expected: tuple[int, int]) -> None:
    """DECISIONS §2: how many of each fruit are juicy is unknown (RECONSTRUCTION), as a parameter."""
    counts = all_cards(GAME.initial_state(3, 5, {"juicy_per_fruit": juicy_param}))
    for fruit in FRUITS:
        assert (counts[fruit], counts[juicy(fruit)]) == expected
    assert sum(counts.values()) == 65


def test_juicy_count_per_fruit() -> None:
    state = GAME.initial_state(3, 5, {"juicy_per_fruit": {"apples": 2, "grapes": 0}})
    counts = all_cards(state)
    assert (counts["apples"], counts["apples*"]) == (7, 2)
    assert (counts["grapes"], counts["grapes*"]) == (9, 0)
    assert (counts["cherries"], counts["cherries*"]) == (8, 1)
    assert GAME.view(state, 0)["juicy_per_fruit"]["apples"] == 2


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_deal_five_each_and_the_rest_is_the_reserve(players: int) -> None:
    """Setup: Shuffle all the cards and deal 5 cards to each player. Place the remaining cards in the
    middle of the table as a face-down pile. This is the reserve pile."""
    state = GAME.initial_state(players, 11)
    assert [len(hand) for hand in state.hands] == [5] * players
    assert len(state.reserve) == 65 - 5 * players
    assert state.discard == () and all(orchard == () for orchard in state.orchards)
    assert GAME.decision(state, state.active) == "turn"


def test_the_starting_seat_is_drawn_from_the_seed() -> None:
    """Setup: "The player who most recently ate a fruit starts the game." DECISIONS §0 and §2: the
    first player is drawn from the match seed."""
    starts = [GAME.initial_state(4, seed).active for seed in range(60)]
    assert set(starts) == {0, 1, 2, 3}
    assert starts == [GAME.initial_state(4, seed).active for seed in range(60)]
    for seed in range(5):
        assert GAME.to_act(GAME.initial_state(4, seed)) == frozenset({starts[seed]})


def test_the_shuffle_follows_the_seed_only() -> None:
    assert GAME.initial_state(5, 7) == GAME.initial_state(5, 7)
    assert GAME.initial_state(5, 7).reserve != GAME.initial_state(5, 8).reserve


def test_two_players_only_as_a_flagged_unofficial_mode() -> None:
    """DECISIONS §2: 3-6 players (confirmed); allow 2 as a flagged unofficial mode with unchanged rules."""
    with pytest.raises(RulesError, match="allow_two_players"):
        GAME.initial_state(2, 1)
    state = GAME.initial_state(2, 1, {"allow_two_players": True})
    assert len(state.reserve) == 55 and GAME.view(state, 0)["two_player_mode"] is True
    GAME.validate_players(2, {"allow_two_players": True})
    with pytest.raises(RulesError):
        GAME.validate_players(2)
    with pytest.raises(RulesError):
        GAME.initial_state(1, 1, {"allow_two_players": True})
    with pytest.raises(RulesError):
        GAME.initial_state(7, 1)


@pytest.mark.parametrize(
    "params",
    [
        {"colour": "red"},
        {"juicy_per_fruit": -1},
        {"juicy_per_fruit": 10},
        {"juicy_per_fruit": True},
        {"juicy_per_fruit": 1.5},
        {"juicy_per_fruit": {"kiwis": 1}},
        {"allow_two_players": "yes"},
    ],
)
def test_bad_parameters_are_refused_clearly(params: dict) -> None:
    with pytest.raises(RulesError):
        GAME.initial_state(3, 1, params)


def test_seed_and_player_count_must_be_integers() -> None:
    with pytest.raises(RulesError):
        GAME.initial_state(3, "seed")  # type: ignore[arg-type]
    with pytest.raises(RulesError):
        GAME.initial_state(3, True)
    with pytest.raises(RulesError):
        GAME.initial_state(3.0, 1)  # type: ignore[arg-type]


def test_no_decision_for_seats_that_do_not_act() -> None:
    state = GAME.initial_state(3, 2)
    other = (state.active + 1) % 3
    with pytest.raises(RulesError):
        GAME.legal_actions(state, other)
    with pytest.raises(RulesError):
        GAME.decision(state, other)
    with pytest.raises(RulesError):
        GAME.apply(state, {other: {"type": "discard", "cards": [state.hands[other][0]]}})
    with pytest.raises(RulesError):
        GAME.result(state)
