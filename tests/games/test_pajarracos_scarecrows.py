"""Pajarracos, action 3: scarecrows that protect a tree, shoo a crow out, or shoo it elsewhere."""

from __future__ import annotations

import pytest

from referee.errors import RulesError
from referee.games.pajarracos import PAJARRACOS as GAME
from referee.games.pajarracos.orchards import find
from referee.games.pajarracos.scenario import DONE, build_state, crow, discard, fruit, scarecrow, step


def tree(state, seat: int, kind: str):
    return find(state.orchards[seat], kind)


def scarecrow_moves(state) -> list[tuple]:
    return [
        (a["fruit"], a["mode"], (a["to"]["orchard"], a["to"]["fruit"]) if "to" in a else None)
        for a in GAME.legal_actions(state, state.active)
        if a["type"] == "scarecrow"
    ]


def test_scarecrows_go_on_own_trees_one_per_tree() -> None:
    """3. "With a scarecrow you can protect your fruit trees"; DECISIONS §2: each on a different own
    tree. A tree that has a scarecrow takes no second one."""
    state = build_state(
        ["scarecrow scarecrow", "cherries", "cherries"], ["apples=1; grapes=1 scarecrow", "bananas=1", ""]
    )
    assert scarecrow_moves(state) == [("apples", "protect", None)]
    with pytest.raises(RulesError):
        step(state, scarecrow("grapes", "protect"))
    with pytest.raises(RulesError):
        step(state, scarecrow("bananas", "protect"))  # seat 1's tree


def test_protect_a_tree_that_has_no_crows() -> None:
    """3.1 "A player may put a scarecrow card on their own tree that has no crows." """
    state = build_state(["scarecrow", "cherries", "cherries"], ["apples=2; grapes=1 crow", "", ""])
    assert ("apples", "protect", None) in scarecrow_moves(state)
    assert ("grapes", "protect", None) not in scarecrow_moves(state)
    with pytest.raises(RulesError, match="has a crow"):
        step(state, scarecrow("grapes", "protect"))
    after = step(state, scarecrow("apples", "protect"))
    assert tree(after, 0, "apples").scarecrow and after.active == 1


def test_a_protected_tree_takes_no_crows_and_no_fruit_until_the_end() -> None:
    """3.1 "Crows cannot attack a tree protected by a scarecrow; however, until the end of the game no
    new fruit cards can be added to that tree either." DECISIONS §2: it stays to the end; no juicy
    pull."""
    state = build_state(
        ["scarecrow apples", "crow apples apples*", "cherries"], ["apples=2", "grapes=1 crow", "bananas=1"]
    )
    state = step(state, scarecrow("apples", "protect"))
    assert not [a for a in GAME.legal_actions(state, 1) if a.get("orchard") == 0]
    with pytest.raises(RulesError):
        step(state, crow("crow", 0, "apples"))
    with pytest.raises(RulesError):
        step(state, fruit(0, "apples*", crow_from=(1, "grapes")))
    state = step(state, discard("crow"), discard("cherries"))
    with pytest.raises(RulesError):
        step(state, fruit(0, "apples"))


def test_shoo_out_of_the_orchard_discards_both_and_gives_an_extra_action() -> None:
    """3.2 "Shoo, out of the orchard! The player may put both cards, the scarecrow and the crows, into
    the discard pile. After this the player gets the right to take one extra turn." """
    state = build_state(["scarecrow apples grapes", "cherries", "cherries"], ["apples=2 crow", "", ""])
    assert ("apples", "shoo_out", None) in scarecrow_moves(state)
    state = step(state, scarecrow("apples", "shoo_out"))
    assert state.discard[-2:] == ("scarecrow", "crow")
    apples = tree(state, 0, "apples")
    assert apples.cards == ("apples", "apples") and apples.crow is None and not apples.scarecrow
    assert state.active == 0 and GAME.decision(state, 0) == "extra_action"


def test_the_extra_action_comes_at_once_and_may_be_any_action() -> None:
    """3.2 "An extra turn allows the player, right after playing one or several scarecrow cards, to
    take a new turn, during which they may choose a new action." DECISIONS §2: no draw between; the
    crows eat and the player draws only after the extra action."""
    state = build_state(
        ["scarecrow apples grapes crow", "cherries", "cherries"], ["apples=2 crow; oranges=2 crow", "bananas=1", ""]
    )
    state = step(state, scarecrow("apples", "shoo_out"))
    assert len(state.hands[0]) == 3 and tree(state, 0, "oranges").cards == ("oranges",) * 2
    assert {a["type"] for a in GAME.legal_actions(state, 0)} == {"fruit", "crow", "discard"}
    state = step(state, fruit(0, "apples"))
    assert tree(state, 0, "apples").cards == ("apples",) * 3
    assert tree(state, 0, "oranges").cards == ("oranges",)  # eaten after the extra action
    assert len(state.hands[0]) == 5 and state.active == 1


def test_only_one_extra_action_however_many_crows_were_shooed() -> None:
    """3.2 "If a player discarded more than one crow card, they still get only one extra turn." """
    state = build_state(
        ["scarecrow scarecrow grapes", "cherries", "cherries"], ["apples=2 crow; bananas=1 flock", "", ""]
    )
    state = step(state, scarecrow("apples", "shoo_out"))
    assert GAME.decision(state, 0) == "more_scarecrows" and GAME.view(state, 0)["extra_action_pending"]
    state = step(state, scarecrow("bananas", "shoo_out"))  # the last scarecrow: the action ends
    assert GAME.decision(state, 0) == "extra_action"
    state = step(state, fruit(0, "grapes"))
    assert state.active == 1


def test_an_extra_action_may_earn_another() -> None:
    """DECISIONS §2: "An extra action may itself earn another (scarecrows are finite)." """
    state = build_state(
        ["scarecrow scarecrow grapes", "cherries", "cherries"], ["apples=2 crow; bananas=1 flock", "", ""]
    )
    state = step(state, scarecrow("apples", "shoo_out"), DONE)
    assert GAME.decision(state, 0) == "extra_action"
    state = step(state, scarecrow("bananas", "shoo_out"))
    assert GAME.decision(state, 0) == "extra_action"
    state = step(state, discard("grapes"))
    assert state.active == 1 and state.orchards[0][0].crow is None


def test_no_extra_action_with_an_empty_hand() -> None:
    """Engine decision: an extra action needs a card to act with; with an empty hand the turn goes on
    to eating and drawing."""
    state = build_state(["scarecrow", "cherries", "cherries"], ["apples=2 crow", "", ""])
    state = step(state, scarecrow("apples", "shoo_out"))
    assert state.active == 1 and len(state.hands[0]) == 5


def test_shoo_to_another_tree_moves_the_crow_and_ends_the_turn() -> None:
    """3.2 "Shoo, to another tree! The player may move the crow card from their tree to another
    player's tree. The crows act as usual, but now on the other tree. In this case the scarecrow card
    is put into the discard pile, and the player's turn ends immediately." """
    state = build_state(
        ["scarecrow scarecrow grapes", "cherries", "cherries"], ["apples=2 flock", "bananas=3", "oranges=1 crow"]
    )
    assert [m for m in scarecrow_moves(state) if m[1] == "shoo_to"] == [("apples", "shoo_to", (1, "bananas"))]
    state = step(state, scarecrow("apples", "shoo_to", to=(1, "bananas")))
    assert tree(state, 0, "apples").crow is None and tree(state, 1, "bananas").crow == "flock"
    assert state.discard == ("scarecrow",) and state.active == 1 and len(state.hands[0]) == 5
    state = step(state, discard("cherries"))
    assert tree(state, 1, "bananas") is None  # the flock acts as usual, on its new tree


def test_shoo_to_ends_the_turn_even_with_an_extra_action_earned() -> None:
    """3.2 "... and the player's turn ends immediately, even if they had the right to an extra turn."
    Engine decision: shooing out then shooing to in the same scarecrow action forfeits the extra
    action, and the shoo-to is the last scarecrow of the action."""
    state = build_state(
        ["scarecrow scarecrow scarecrow grapes", "cherries", "cherries"],
        ["apples=2 crow; bananas=1 crow; oranges=1", "grapes=1", ""],
    )
    state = step(state, scarecrow("apples", "shoo_out"))
    state = step(state, scarecrow("bananas", "shoo_to", to=(1, "grapes")))
    assert state.active == 1 and "scarecrow" in state.hands[0]  # the third scarecrow stays in hand
    assert tree(state, 1, "grapes").crow == "crow"


def test_shoo_to_needs_another_players_free_tree() -> None:
    """DECISIONS §2: "shoo a crow to another player's legal tree" (no crow, no scarecrow there)."""
    state = build_state(
        ["scarecrow", "cherries", "cherries"], ["apples=2 crow; grapes=1", "bananas=1 crow", "oranges=1 scarecrow"]
    )
    assert [m for m in scarecrow_moves(state) if m[1] == "shoo_to"] == []
    for to in [(0, "grapes"), (1, "bananas"), (2, "oranges"), (2, "apples")]:
        with pytest.raises(RulesError):
            step(state, scarecrow("apples", "shoo_to", to=to))
    with pytest.raises(RulesError, match="no crow"):
        step(state, scarecrow("grapes", "shoo_out"))


def test_several_scarecrows_in_one_action_each_on_a_different_tree() -> None:
    """3. "During their turn a player may play one or several scarecrow cards from their hand."
    DECISIONS §2: each on a different own tree; a tree freed by a shoo-out takes no second scarecrow
    in the same action."""
    state = build_state(
        ["scarecrow scarecrow scarecrow", "cherries", "cherries"], ["apples=2 crow; grapes=1; oranges=1", "", ""]
    )
    state = step(state, scarecrow("apples", "shoo_out"))
    moves = scarecrow_moves(state)
    assert ("apples", "protect", None) not in moves and ("grapes", "protect", None) in moves
    with pytest.raises(RulesError, match="already"):
        step(state, scarecrow("apples", "protect"))
    state = step(state, scarecrow("grapes", "protect"), DONE)
    assert GAME.decision(state, 0) == "extra_action" and tree(state, 0, "grapes").scarecrow
    state = step(state, scarecrow("apples", "protect"))  # the extra action is a new action
    assert tree(state, 0, "apples").scarecrow and state.active == 1


def test_protect_only_gives_no_extra_action() -> None:
    state = build_state(["scarecrow scarecrow", "cherries", "cherries"], ["apples=2; grapes=1", "", ""])
    state = step(state, scarecrow("apples", "protect"), DONE)
    assert state.active == 1


def test_only_scarecrows_or_done_while_a_scarecrow_action_is_under_way() -> None:
    state = build_state(["scarecrow scarecrow grapes", "cherries", "cherries"], ["apples=2; grapes=1", "", ""])
    state = step(state, scarecrow("apples", "protect"))
    assert GAME.legal_actions(state, 0) == [DONE, scarecrow("grapes", "protect")]
    with pytest.raises(RulesError, match="under way"):
        step(state, fruit(0, "grapes"))
