"""Pajarracos: discarding, the end of a turn (eat, draw, pass left) and the end of the game."""

from __future__ import annotations

import pytest

from referee.errors import RulesError
from referee.games.pajarracos import PAJARRACOS as GAME
from referee.games.pajarracos.orchards import find
from referee.games.pajarracos.scenario import build_state, crow, discard, fruit, step


def test_discard_any_number_of_cards_ends_the_turn() -> None:
    """4. "A player may discard any number of cards from their hand. This ends the player's turn." """
    state = build_state(["apples apples crow scarecrow grapes*", "cherries", "cherries"])
    listed = [a["cards"] for a in GAME.legal_actions(state, 0) if a["type"] == "discard"]
    assert len(listed) == 2 * 2 * 2 * 3 - 1  # every non-empty sub-multiset of the hand
    assert ["apples", "apples", "grapes*", "crow", "scarecrow"] in listed
    state = step(state, discard("scarecrow", "apples", "crow"))
    assert state.discard == ("apples", "crow", "scarecrow") and state.active == 1
    with pytest.raises(RulesError):
        step(state, discard())


def test_discard_needs_cards_in_hand() -> None:
    state = build_state(["apples", "cherries", "cherries"])
    for cards in (["apples", "apples"], ["grapes"]):
        with pytest.raises(RulesError, match="does not hold"):
            step(state, discard(*cards))


def test_draw_up_to_five_and_pass_to_the_left() -> None:
    """End of Turn: "After taking one of the actions above, they draw cards from the reserve pile up
    to 5 in hand and pass the turn to the next player on the left (clockwise)." DECISIONS §0: seat
    (i + 1) mod n."""
    state = build_state(
        ["apples apples apples crow grapes", "cherries", "cherries", "cherries cherries oranges* bananas flock"],
        active=3,
        reserve="oranges bananas* grapes*",
    )
    state = step(state, discard("flock"))
    assert state.active == 0 and state.hands[3] == ("cherries", "cherries", "oranges", "oranges*", "bananas")
    state = step(state, fruit(0, "apples", "apples", "apples"))
    assert state.hands[0] == ("bananas*", "grapes", "grapes*", "crow") and state.reserve == ()
    assert state.active == 1 and state.turn == 3


def test_draw_only_while_the_reserve_lasts_and_never_reshuffle() -> None:
    """End of the Game: "When no cards remain in the reserve pile, the participants continue playing
    using only the cards in their hands." DECISIONS §2: the reserve is never reshuffled."""
    state = build_state(["apples apples grapes", "cherries", "cherries"], reserve="oranges", discard="crow crow")
    state = step(state, discard("apples", "apples", "grapes"))
    assert state.hands[0] == ("oranges",) and state.reserve == ()
    state = step(state, discard("cherries"))
    assert state.hands[1] == () and state.reserve == () and state.active == 2
    assert GAME.view(state, 2)["reserve_size"] == 0


def test_the_game_ends_when_a_player_with_no_cards_would_start_a_turn() -> None:
    """End of the Game: "The game ends as soon as it is the turn of a player who has no cards left."
    DECISIONS §2: at once, no eating."""
    state = build_state(["apples", "", "cherries"], ["", "grapes=2 crow", ""], reserve="")
    assert not GAME.is_terminal(state)
    state = step(state, fruit(0, "apples"))
    assert GAME.is_terminal(state) and GAME.to_act(state) == frozenset()
    assert find(state.orchards[1], "grapes").cards == ("grapes", "grapes")  # the crow did not eat
    with pytest.raises(RulesError, match="over"):
        GAME.apply(state, {1: discard("apples")})
    assert GAME.result(state)["scores"] == [2, 4, 0]


def test_a_player_without_cards_ends_the_game_only_when_their_turn_comes() -> None:
    state = build_state(["apples", "cherries", ""], reserve="")
    state = step(state, discard("apples"))
    assert not GAME.is_terminal(state) and state.active == 1
    state = step(state, discard("cherries"))
    assert GAME.is_terminal(state)


def test_at_the_end_hands_crows_and_scarecrows_go_to_the_discard_pile() -> None:
    """End of the Game: "Crow cards on the trees immediately stop acting. All players put into the
    discard pile the cards remaining in their hands, as well as all crow and scarecrow cards from
    their trees." """
    state = build_state(
        ["apples", "", "crow grapes*"],
        ["bananas=1 scarecrow", "grapes=2 crow", "oranges=3 flock"],
        reserve="",
        discard="",
    )
    state = step(state, fruit(0, "apples"))
    assert state.hands == ((), (), ())
    assert state.discard[-5:] == ("grapes*", "crow", "scarecrow", "crow", "flock")
    trees = [(t.fruit, len(t.cards), t.crow, t.scarecrow) for orchard in state.orchards for t in orchard]
    assert trees == [
        ("apples", 1, None, False),
        ("bananas", 1, None, False),
        ("grapes", 2, None, False),
        ("oranges", 3, None, False),
    ]
    assert GAME.conservation(state)["cards"] == 65


def test_every_match_ends() -> None:
    """Every action moves at least one card out of the hands, which only the finite reserve refills."""
    state = GAME.initial_state(3, 4)
    for _ in range(200):
        if GAME.is_terminal(state):
            break
        state = step(state, GAME.legal_actions(state, state.active)[-1])
    assert GAME.is_terminal(state)


def test_same_seed_and_same_actions_give_the_same_match() -> None:
    import random

    def play(seed: int) -> tuple[list, object]:
        rng = random.Random(99)
        state = GAME.initial_state(5, seed)
        log = []
        while not GAME.is_terminal(state):
            action = rng.choice(GAME.legal_actions(state, state.active))
            log.append(action)
            state = step(state, action)
        return log, state

    log_a, final_a = play(8)
    log_b, final_b = play(8)
    assert log_a == log_b and final_a == final_b
    replayed = GAME.initial_state(5, 8)
    for action in log_a:
        replayed = step(replayed, action)
    assert replayed == final_a and GAME.result(replayed) == GAME.result(final_a)


def test_a_crow_placed_in_the_last_turn_never_eats() -> None:
    state = build_state(["crow", "", "cherries"], ["", "grapes=2", ""], reserve="")
    state = step(state, crow("crow", 1, "grapes"))
    assert GAME.is_terminal(state) and find(state.orchards[1], "grapes").cards == ("grapes", "grapes")
