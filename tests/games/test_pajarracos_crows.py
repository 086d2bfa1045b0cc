"""Pajarracos, action 2: crow cards, and when and how crows eat."""

from __future__ import annotations

import pytest

from referee.errors import RulesError
from referee.games.pajarracos import PAJARRACOS as GAME
from referee.games.pajarracos.orchards import find
from referee.games.pajarracos.scenario import DONE, build_state, crow, discard, fruit, scarecrow, step


def tree(state, seat: int, kind: str):
    return find(state.orchards[seat], kind)


def crow_targets(state) -> set[tuple[str, int, str]]:
    return {
        (a["card"], a["orchard"], a["fruit"]) for a in GAME.legal_actions(state, state.active) if a["type"] == "crow"
    }


def test_crows_go_onto_other_players_trees_only() -> None:
    """2. "They can be placed on other players' fruit trees" (DECISIONS §2: OTHER players' trees)."""
    state = build_state(["crow grapes", "cherries", "cherries"], ["apples=1", "bananas=2", "grapes=1"])
    assert crow_targets(state) == {("crow", 1, "bananas"), ("crow", 2, "grapes")}
    with pytest.raises(RulesError, match="OTHER"):
        step(state, crow("crow", 0, "apples"))
    with pytest.raises(RulesError):
        step(state, crow("crow", 1, "cherries"))  # no such tree


def test_no_crow_where_a_crow_or_a_scarecrow_already_is() -> None:
    """2. "but no more than one card on one tree"; a protected tree cannot be attacked (3.1:
    "Crows cannot attack a tree protected by a scarecrow")."""
    state = build_state(["flock", "cherries", "cherries"], ["", "bananas=2 crow; apples=1 scarecrow", "grapes=1"])
    assert crow_targets(state) == {("flock", 2, "grapes")}
    with pytest.raises(RulesError):
        step(state, crow("flock", 1, "bananas"))
    with pytest.raises(RulesError):
        step(state, crow("flock", 1, "apples"))


def test_several_crow_cards_in_one_action() -> None:
    """2. "A player may play one or several crow cards from their hand", at most one per tree: the
    action places them one at a time (decision ``more_crows``) until the player says done."""
    state = build_state(["crow crow flock apples", "cherries", "cherries"], ["", "bananas=2; apples=1", "grapes=1"])
    state = step(state, crow("crow", 1, "bananas"))
    assert GAME.decision(state, 0) == "more_crows" and state.active == 0
    listed = GAME.legal_actions(state, 0)
    assert listed[0] == DONE and {a["type"] for a in listed} == {"done", "crow"}
    assert (1, "bananas") not in {(a["orchard"], a["fruit"]) for a in listed[1:]}
    state = step(state, crow("flock", 2, "grapes"))
    state = step(state, DONE)
    assert state.active == 1 and GAME.decision(state, 1) == "turn"
    assert (tree(state, 1, "bananas").crow, tree(state, 2, "grapes").crow) == ("crow", "flock")
    assert len(state.hands[0]) == 5  # drew back up after the action


def test_a_crow_action_ends_by_itself_when_nothing_more_can_be_placed() -> None:
    state = build_state(["crow crow apples", "cherries", "cherries"], ["", "bananas=2", ""])
    state = step(state, crow("crow", 1, "bananas"))
    assert state.active == 1  # no free tree left for the second crow


def test_only_crows_or_done_while_a_crow_action_is_under_way() -> None:
    state = build_state(["crow crow apples", "cherries", "cherries"], ["", "bananas=2", "grapes=1"])
    state = step(state, crow("crow", 1, "bananas"))
    with pytest.raises(RulesError, match="under way"):
        step(state, fruit(0, "apples"))
    with pytest.raises(RulesError, match="under way"):
        step(state, discard("apples"))


def test_done_is_only_for_an_action_under_way() -> None:
    state = build_state(["crow", "cherries", "cherries"], ["", "bananas=2", ""])
    with pytest.raises(RulesError, match="done"):
        step(state, DONE)


def test_a_crow_eats_only_at_the_end_of_its_tree_owners_turn() -> None:
    """Lone Crow: "A crow sitting on a fruit tree eats one fruit card at the end of the turn of the
    player who owns the tree." DECISIONS §2: so the victim always gets a turn to answer."""
    state = build_state(["crow", "cherries", "grapes"], ["", "bananas=3", ""])
    state = step(state, crow("crow", 1, "bananas"))
    assert tree(state, 1, "bananas").cards == ("bananas",) * 3  # not at the placer's turn end
    state = step(state, fruit(1, "cherries"))
    assert tree(state, 1, "bananas").cards == ("bananas",) * 2
    assert state.discard[-1] == "bananas"


def test_the_eaten_card_is_the_top_one_and_goes_to_the_discard_pile() -> None:
    """Lone Crow: "The eaten fruit card is put into the discard pile." The engine takes the top card
    (a juicy card played last lies on top)."""
    state = build_state(["grapes", "cherries", "cherries"], ["apples=2+1* crow", "", ""])
    state = step(state, fruit(1, "grapes"))
    assert tree(state, 0, "apples").cards == ("apples", "apples")
    assert state.discard[-1] == "apples*"


def test_an_unprotected_tree_loses_one_fruit_every_turn() -> None:
    """Lone Crow: "If the player does not protect their tree, the crow will eat one fruit every
    turn." """
    state = build_state(["grapes grapes", "cherries cherries", "oranges oranges"], ["apples=3 crow", "", ""])
    sizes = []
    for _ in range(2):
        state = step(state, discard(state.hands[0][0]))
        sizes.append(len(tree(state, 0, "apples").cards))
        state = step(state, discard(state.hands[1][0]), discard(state.hands[2][0]))
        sizes.append(len(tree(state, 0, "apples").cards))
    assert sizes == [2, 2, 1, 1]


def test_the_crow_leaves_with_the_last_fruit() -> None:
    """Lone Crow: "When the last fruit card is discarded from the tree, the crow card also goes to
    the discard pile." The empty tree disappears, so the kind can be planted again."""
    state = build_state(["grapes apples", "cherries", "cherries"], ["apples=1 crow; grapes=1", "", ""])
    state = step(state, fruit(1, "grapes"))
    assert tree(state, 0, "apples") is None
    assert state.discard[-2:] == ("apples", "crow")
    state = step(state, discard("cherries"), discard("cherries"))
    state = step(state, fruit(0, "apples"))
    assert tree(state, 0, "apples").cards == ("apples",)


def test_a_flock_eats_the_whole_tree_in_one_turn() -> None:
    """Flock of Crows: "If the player does not protect their tree, then at the end of their turn all
    the fruit cards of that tree are discarded, together with the flock of crows card." """
    state = build_state(["grapes", "cherries", "cherries"], ["apples=4+1* flock; grapes=2", "", ""])
    state = step(state, fruit(0, "grapes"))
    assert tree(state, 0, "apples") is None and tree(state, 0, "grapes").cards == ("grapes",) * 3
    assert state.discard == ("apples",) * 4 + ("apples*", "flock")


def test_every_crow_on_the_active_players_trees_eats_and_no_other() -> None:
    """DECISIONS §2 turn order: the crows on the ACTIVE player's trees eat."""
    state = build_state(
        ["grapes", "cherries", "cherries"],
        ["apples=2 crow; bananas=1 flock; oranges=3", "apples=2 crow", "grapes=2 flock"],
    )
    state = step(state, discard("grapes"))
    assert [(t.fruit, len(t.cards), t.crow) for t in state.orchards[0]] == [("apples", 1, "crow"), ("oranges", 3, None)]
    assert tree(state, 1, "apples").cards == ("apples",) * 2 and tree(state, 2, "grapes").crow == "flock"


def test_the_owner_may_protect_before_the_crow_eats() -> None:
    """Lone Crow: "The player has the option to protect their tree with a scarecrow card before the
    crow eats a fruit." """
    state = build_state(["crow", "scarecrow cherries", "cherries"], ["", "bananas=3", ""])
    state = step(state, crow("crow", 1, "bananas"))
    state = step(state, scarecrow("bananas", "shoo_out"), discard("cherries"))
    assert tree(state, 1, "bananas").cards == ("bananas",) * 3 and tree(state, 1, "bananas").crow is None


def test_a_crow_pulled_onto_your_own_tree_eats_at_the_end_of_your_turn() -> None:
    """DECISIONS §2: crows eat at the end of their tree owner's turn; a juicy card on your own tree
    pulls a crow there during your own turn, and it eats at once."""
    state = build_state(["apples*", "cherries", "cherries"], ["apples=2", "grapes=2 crow", ""])
    state = step(state, fruit(0, "apples*", crow_from=(1, "grapes")))
    assert tree(state, 0, "apples").cards == ("apples", "apples") and tree(state, 0, "apples").crow == "crow"
    assert tree(state, 1, "grapes").crow is None
