"""Pajarracos, action 1: play fruit cards, and the juicy fruits that attract crows."""

from __future__ import annotations

import pytest

from referee.errors import RulesError
from referee.games.pajarracos import PAJARRACOS as GAME
from referee.games.pajarracos.orchards import find
from referee.games.pajarracos.scenario import build_state, crow, fruit, step


def tree(state, seat: int, kind: str):
    return find(state.orchards[seat], kind)


def legal_types(state) -> set[str]:
    return {action["type"] for action in GAME.legal_actions(state, state.active)}


def test_four_possible_actions() -> None:
    """Turn: "During a turn a player may take one of four possible actions": fruit, crow, scarecrow,
    discard. One action only: after a fruit action the turn has passed."""
    state = build_state(["apples crow scarecrow grapes oranges", "", "cherries"], ["", "bananas=1", "grapes=1"])
    assert legal_types(state) == {"fruit", "crow", "discard"}  # no own tree yet: no scarecrow
    state = build_state(["apples crow scarecrow", "bananas", "cherries"], ["apples=1", "bananas=1", ""])
    assert legal_types(state) == {"fruit", "crow", "scarecrow", "discard"}
    after = step(state, fruit(0, "apples"))
    assert after.active == 1 and GAME.decision(after, 1) == "turn"


def test_any_number_of_one_kind() -> None:
    """1. "A player may play any number of fruit cards of one kind." """
    state = build_state(["apples apples apples cherries", "grapes", "grapes"])
    after = step(state, fruit(0, "apples", "apples", "apples"))
    assert tree(after, 0, "apples").cards == ("apples",) * 3
    assert after.hands[0][:1] == ("cherries",)
    with pytest.raises(RulesError, match="ONE kind"):
        step(state, fruit(0, "apples", "cherries"))
    with pytest.raises(RulesError):
        step(state, fruit(0, "apples", "apples", "apples", "apples"))  # only three in hand
    with pytest.raises(RulesError):
        step(state, fruit(0))


def test_fruit_goes_into_own_orchard_as_a_new_tree() -> None:
    """1. "Played fruit cards are placed face up in front of the player, in their orchard." DECISIONS
    §2: onto that orchard's tree of that kind (a new tree if it has none)."""
    state = build_state(["oranges", "grapes", "grapes"], ["apples=2", "", ""])
    after = step(state, fruit(0, "oranges"))
    assert [t.fruit for t in after.orchards[0]] == ["apples", "oranges"]
    assert GAME.public_view(after)["orchards"][0][1]["size"] == 1


def test_fruit_may_go_into_another_players_orchard() -> None:
    """1. "Fruit cards may be played into your own orchard or into the orchards of other players." """
    state = build_state(["oranges oranges", "grapes", "grapes"], ["", "oranges=1", ""])
    after = step(state, fruit(1, "oranges", "oranges"))
    assert tree(after, 1, "oranges").cards == ("oranges",) * 3
    assert after.orchards[0] == ()
    after = step(state, fruit(2, "oranges"))
    assert tree(after, 2, "oranges").cards == ("oranges",)


def test_cards_of_one_kind_pile_up_on_one_tree() -> None:
    """1. "Fruit cards of one kind are placed one on top of another so that their number can be seen."
    and "you may have only one fruit tree of each kind" and "each fruit tree must consist of fruits of
    one kind"."""
    state = build_state(["cherries cherries", "grapes", "grapes"], ["cherries=2; apples=1", "", ""])
    after = step(state, fruit(0, "cherries", "cherries"))
    assert [(t.fruit, len(t.cards)) for t in after.orchards[0]] == [("cherries", 4), ("apples", 1)]
    assert all(set(t.cards) <= {t.fruit, t.fruit + "*"} for t in after.orchards[0])
    view_tree = GAME.view(after, 1)["orchards"][0][0]
    assert view_tree == {
        "fruit": "cherries",
        "size": 4,
        "cards": ("cherries",) * 4,
        "crow": None,
        "scarecrow": False,
    }


def test_no_fruit_onto_a_tree_attacked_by_crows() -> None:
    """1. "you may not add fruit cards to a tree that is protected by a scarecrow or attacked by
    crows" (the crow half; DECISIONS §2: illegal onto a tree with a crow)."""
    state = build_state(["apples bananas", "grapes", "grapes"], ["apples=2 crow", "bananas=1 flock", ""])
    targets = {(a["orchard"], a["cards"][0]) for a in GAME.legal_actions(state, 0) if a["type"] == "fruit"}
    assert (0, "apples") not in targets and (1, "bananas") not in targets
    assert (1, "apples") in targets and (0, "bananas") in targets
    with pytest.raises(RulesError, match="crow or a scarecrow"):
        step(state, fruit(0, "apples"))
    with pytest.raises(RulesError, match="crow or a scarecrow"):
        step(state, fruit(1, "bananas"))


def test_no_fruit_onto_a_tree_protected_by_a_scarecrow() -> None:
    """1. "you may not add fruit cards to a tree that is protected by a scarecrow" (also into another
    player's protected tree)."""
    state = build_state(["apples", "grapes", "grapes"], ["apples=2 scarecrow", "apples=1 scarecrow", ""])
    targets = {a["orchard"] for a in GAME.legal_actions(state, 0) if a["type"] == "fruit"}
    assert targets == {2}
    with pytest.raises(RulesError):
        step(state, fruit(1, "apples"))


def test_a_juicy_fruit_can_be_played_with_ordinary_ones() -> None:
    """Juicy Fruits: "During a turn a juicy fruit can be played together with cards of ordinary
    fruits of the same kind." With no crows out it is an ordinary card."""
    state = build_state(["apples apples* apples", "grapes", "grapes"])
    after = step(state, fruit(0, "apples*", "apples", "apples"))
    assert tree(after, 0, "apples").cards == ("apples", "apples", "apples*")  # juicy on top
    after = step(state, fruit(0, "apples*"))
    assert tree(after, 0, "apples").cards == ("apples*",)


def test_a_single_crow_on_the_table_flies_to_the_juicy_fruit() -> None:
    """Juicy Fruits: "If there is only one crow card on the game table, it flies to the tree on which
    the juicy fruit card has just appeared." DECISIONS §2: its old tree is freed."""
    state = build_state(["grapes*", "cherries", "cherries"], ["", "grapes=2; apples=3 crow", ""])
    listed = [a for a in GAME.legal_actions(state, 0) if a["type"] == "fruit"]
    assert all(a["crow_from"] == {"orchard": 1, "fruit": "apples"} for a in listed)
    after = step(state, fruit(1, "grapes*", crow_from=(1, "apples")))
    assert tree(after, 1, "grapes").crow == "crow"
    assert tree(after, 1, "apples").crow is None
    with pytest.raises(RulesError, match="crow_from"):
        step(state, fruit(1, "grapes*"))


def test_the_player_chooses_which_of_several_crows_flies() -> None:
    """Juicy Fruits: "If there are several crows on the table, the player who played the juicy fruit
    decides which of them flies to the new tree." The flock stays a flock when it flies."""
    state = build_state(
        ["oranges* oranges", "cherries", "cherries"],
        ["", "oranges=1; apples=3 crow", "bananas=2 flock"],
    )
    options = {
        (a["crow_from"]["orchard"], a["crow_from"]["fruit"])
        for a in GAME.legal_actions(state, 0)
        if a["type"] == "fruit" and a["orchard"] == 1 and "oranges*" in a["cards"]
    }
    assert options == {(1, "apples"), (2, "bananas")}
    after = step(state, fruit(1, "oranges", "oranges*", crow_from=(2, "bananas")))
    assert tree(after, 1, "oranges").crow == "flock"
    assert tree(after, 2, "bananas").crow is None and tree(after, 1, "apples").crow == "crow"
    with pytest.raises(RulesError, match="crow_from"):
        step(state, fruit(1, "oranges*", crow_from=(0, "bananas")))


def test_crows_on_own_trees_are_attracted_too() -> None:
    """DECISIONS §2: "if crows sit on any trees (own included), ONE of them, chosen by the player,
    flies to the tree that just got the juicy card; its old tree is freed." A juicy card on a rival's
    tree can lure the crow off your own tree."""
    state = build_state(["apples*", "cherries", "cherries"], ["bananas=3 crow", "apples=1", ""])
    after = step(state, fruit(1, "apples*", crow_from=(0, "bananas")))
    assert tree(after, 0, "bananas") == tree(state, 0, "bananas")._replace(crow=None)
    assert tree(after, 1, "apples").crow == "crow"


def test_a_juicy_fruit_with_no_crows_out_is_ordinary_forever() -> None:
    """Juicy Fruits: "If there are no crows on the table, the juicy fruit is played as an ordinary
    fruit card and does not attract crows that appear in the future." """
    state = build_state(["apples*", "crow grapes", "cherries"], ["", "", ""])
    listed = [a for a in GAME.legal_actions(state, 0) if a["type"] == "fruit"]
    assert listed and all("crow_from" not in a for a in listed)
    with pytest.raises(RulesError, match="crow_from"):
        step(state, fruit(0, "apples*", crow_from=(1, "grapes")))
    state = step(state, fruit(0, "apples*"))
    state = step(state, crow("crow", 0, "apples"))  # seat 1 attacks the juicy tree...
    assert tree(state, 0, "apples").crow == "crow"
    state = build_state(["apples*", "crow", "cherries"], ["", "", "grapes=2"])
    state = step(state, fruit(0, "apples*"), crow("crow", 2, "grapes"))
    assert tree(state, 2, "grapes").crow == "crow"  # ...and a later crow is not pulled over


def test_ordinary_cards_never_name_a_crow() -> None:
    state = build_state(["apples", "grapes", "grapes"], ["", "cherries=1 crow", ""])
    with pytest.raises(RulesError, match="crow_from"):
        step(state, fruit(0, "apples", crow_from=(1, "cherries")))


def test_card_order_and_key_order_do_not_matter() -> None:
    """An action equal as JSON to a listed one is accepted in any key order; card lists are read as
    multisets, and the engine answers the listed spelling."""
    state = build_state(["apples apples* apples", "grapes", "grapes"], ["", "cherries=1 crow", ""])
    listed = fruit(1, "apples", "apples", "apples*", crow_from=(1, "cherries"))
    assert listed in GAME.legal_actions(state, 0)
    shuffled = {
        "crow_from": {"fruit": "cherries", "orchard": 1},
        "cards": ["apples*", "apples", "apples"],
        "orchard": 1,
        "type": "fruit",
    }
    assert GAME.canonical_action(state, 0, shuffled) == listed
    assert step(state, shuffled) == step(state, listed)


@pytest.mark.parametrize(
    "action",
    [
        {"type": "fruit", "orchard": 1, "cards": "apples"},
        {"type": "fruit", "orchard": True, "cards": ["apples"]},
        {"type": "fruit", "orchard": 1.0, "cards": ["apples"]},
        {"type": "fruit", "orchard": 3, "cards": ["apples"]},
        {"type": "fruit", "orchard": 1, "cards": ["kiwis"]},
        {"type": "fruit", "orchard": 1, "cards": [["apples"]]},
        {"type": "fruit", "orchard": 1, "cards": ["crow"]},
        {"type": "fruit", "orchard": 1, "cards": ["apples"], "extra": 1},
        {"type": "fruit", "cards": ["apples"]},
        {"type": "fruit", "orchard": 1, "cards": ["apples*"], "crow_from": {"orchard": 1}},
    ],
)
def test_malformed_fruit_actions_are_refused(action: dict) -> None:
    state = build_state(["apples apples* crow", "grapes", "grapes"], ["", "cherries=1 crow", ""])
    with pytest.raises(RulesError):
        GAME.apply(state, {0: action})
