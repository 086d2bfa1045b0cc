"""Pajarracos views: what each seat and a spectator see, and what no one else may see."""

from __future__ import annotations

import json

from referee.games.pajarracos import PAJARRACOS as GAME
from referee.games.pajarracos.scenario import build_state, scarecrow, step


def canonical(view: dict) -> bytes:
    return json.dumps(view, sort_keys=True, separators=(",", ":")).encode()


def assert_same_view(game, state_a, state_b, seat: int) -> None:
    """The redaction contract: states that differ only in what ``seat`` cannot see look identical."""
    assert canonical(game.view(state_a, seat)) == canonical(game.view(state_b, seat))


def assert_same_public_view(game, state_a, state_b) -> None:
    assert canonical(game.public_view(state_a)) == canonical(game.public_view(state_b))


ORCHARDS = ["apples=2 crow; grapes=1", "bananas=1 scarecrow", "cherries=2+1* flock"]


def test_a_seat_sees_its_hand_and_everything_public() -> None:
    """DECISIONS §2: "Seen by all: orchards, crows, scarecrows, hand sizes, reserve size, the discard
    pile (face up). Private: each hand and the reserve order." """
    state = build_state(["apples scarecrow", "grapes grapes", "crow"], ORCHARDS, discard="oranges flock")
    view = GAME.view(state, 0)
    assert view["seat"] == 0 and list(view["hand"]) == ["apples", "scarecrow"]
    assert view["hand_sizes"] == [2, 2, 1] and view["reserve_size"] == len(state.reserve)
    assert list(view["discard"])[-2:] == ["oranges", "flock"]
    assert view["decision"] == "turn" and view["to_act"] == [0] and view["active"] == 0
    assert view["orchards"][2] == [
        {
            "fruit": "cherries",
            "size": 3,
            "cards": ("cherries", "cherries", "cherries*"),
            "crow": "flock",
            "scarecrow": False,
        }
    ]
    assert view["scores"] == [5, 2, 6] and view["extra_action_pending"] is False
    assert GAME.view(state, 1)["decision"] is None
    text = json.dumps(view)
    assert "grapes grapes" not in text and json.loads(text)["hand"] == ["apples", "scarecrow"]


def test_public_view_is_the_seat_view_without_a_hand() -> None:
    state = build_state(["apples scarecrow", "grapes grapes", "crow"], ORCHARDS)
    public = GAME.public_view(state)
    seat = GAME.view(state, 1)
    assert {k: v for k, v in seat.items() if k not in ("seat", "hand", "decision")} == public
    assert "hand" not in public


def test_another_seats_hand_is_never_seen() -> None:
    a = build_state(["apples scarecrow", "grapes grapes crow", "crow"], ORCHARDS)
    b = build_state(["apples scarecrow", "oranges flock bananas*", "crow"], ORCHARDS)
    assert_same_view(GAME, a, b, 0)
    assert_same_view(GAME, a, b, 2)
    assert_same_public_view(GAME, a, b)
    assert canonical(GAME.view(a, 1)) != canonical(GAME.view(b, 1))


def test_the_reserve_order_is_never_seen() -> None:
    a = build_state(["apples", "grapes", "crow"], ORCHARDS)
    b = a.clone()
    b.reserve = tuple(reversed(a.reserve))
    assert a.reserve != b.reserve
    for seat in range(3):
        assert_same_view(GAME, a, b, seat)
    assert_same_public_view(GAME, a, b)


def test_redaction_holds_in_random_matches() -> None:
    """Shuffling every hand but one's (card for card, keeping sizes) and the reserve changes nothing
    that seat sees, at every step of seeded random matches."""
    import random

    for seed in range(25):
        rng = random.Random(seed)
        state = GAME.initial_state(3 + seed % 4, seed)
        while not GAME.is_terminal(state):
            seat = rng.randrange(state.num_players)
            other = state.clone()
            pool = [c for s, hand in enumerate(state.hands) if s != seat for c in hand] + list(state.reserve)
            rng.shuffle(pool)
            hands = list(state.hands)
            for s in range(state.num_players):
                if s != seat:
                    hands[s] = tuple(sorted(pool[: len(hands[s])]))
                    del pool[: len(hands[s])]
            other.hands = tuple(hands)
            other.reserve = tuple(pool)
            assert_same_view(GAME, state, other, seat)
            state = GAME.apply(state, {state.active: rng.choice(GAME.legal_actions(state, state.active))})


def test_an_earned_extra_action_is_public() -> None:
    state = build_state(["scarecrow scarecrow grapes", "cherries", "cherries"], ["apples=2 crow; bananas=1", "", ""])
    state = step(state, scarecrow("apples", "shoo_out"))
    view = GAME.public_view(state)
    assert view["phase"] == "more_scarecrows" and view["extra_action_pending"] is True
    assert list(view["scarecrowed_this_action"]) == ["apples"]


def test_the_final_view_holds_the_result() -> None:
    state = build_state(["apples", "", "grapes"], reserve="")
    state = step(state, {"type": "discard", "cards": ["apples"]})
    view = GAME.public_view(state)
    assert view["phase"] == "over" and view["to_act"] == [] and view["result"] == GAME.result(state)
    assert GAME.view(state, 0)["decision"] is None
