"""The Pajarracos heuristic on chosen tables: it shoos, dodges and attacks as its docstring says,
answers only listed actions, and answers fast."""

from __future__ import annotations

import json
import random
import time

from referee.games.pajarracos import PAJARRACOS as GAME
from referee.games.pajarracos.scenario import build_state
from sample_bots import pajarracos_strategy as strategy
from sample_bots.pajarracos_strategy import choose


def _request(state, seat: int | None = None) -> dict:
    seat = state.active if seat is None else seat
    view = json.loads(json.dumps(GAME.view(state, seat)))
    return {"game": "pajarracos", "view": view, "decision": GAME.decision(state, seat),
            "legal_actions": GAME.legal_actions(state, seat)}


def _choice(hands: list[str], orchards: list[str], **kwargs) -> dict:
    request = _request(build_state(hands, orchards, **kwargs))
    action = choose(request, random.Random(0))
    assert action in request["legal_actions"]
    return action


def test_shoos_a_crow_off_its_largest_tree_and_takes_the_extra_action() -> None:
    action = _choice(["apples apples scarecrow grapes crow", "bananas", "cherries"],
                     ["apples=5 crow; grapes=1", "bananas=3", "cherries=2"])
    assert action == {"type": "scarecrow", "fruit": "apples", "mode": "shoo_out"}


def test_pulls_a_flock_off_its_tree_onto_an_opponent_with_a_juicy_card() -> None:
    action = _choice(["oranges* grapes bananas cherries cherries", "bananas", "cherries"],
                     ["apples=5 flock; grapes=1", "bananas=3", "oranges=2"])
    assert action["type"] == "fruit" and action["orchard"] != 0
    assert action["crow_from"] == {"orchard": 0, "fruit": "apples"}


def test_sends_a_flock_to_the_leaders_largest_tree() -> None:
    action = _choice(["flock grapes bananas cherries crow", "bananas", "cherries"],
                     ["apples=2; grapes=1", "bananas=6; oranges=2", "oranges=2"])
    assert action == {"type": "crow", "card": "flock", "orchard": 1, "fruit": "bananas"}


def test_grows_its_own_orchard_rather_than_anyone_elses() -> None:
    action = _choice(["apples grapes grapes cherries crow", "bananas bananas oranges crow scarecrow",
                      "cherries apples apples oranges grapes"],
                     ["apples=5; grapes=1", "bananas=2", "cherries=2"])
    assert action["type"] == "fruit" and action["orchard"] == 0


def test_discards_cards_it_can_no_longer_use() -> None:
    """Its apple and grape trees are protected (no fruit may be added) and every other tree too."""
    action = _choice(["apples apples grapes crow scarecrow", "bananas", "cherries"],
                     ["apples=5 scarecrow; grapes=3 scarecrow", "bananas=1 scarecrow", "cherries=1 scarecrow"])
    assert action["type"] == "discard" and {"apples", "grapes"} <= set(action["cards"])


def test_shoos_a_second_crow_out_before_taking_the_extra_action() -> None:
    action = _choice(["scarecrow apples apples", "bananas", "cherries"],
                     ["apples=5; grapes=2 crow", "bananas=2", "cherries=2"],
                     phase="more_scarecrows", shooed_out=True, scarecrowed="apples")
    assert action == {"type": "scarecrow", "fruit": "grapes", "mode": "shoo_out"}


def test_answers_every_decision_of_random_matches_legally_and_well_within_100_ms() -> None:
    worst = 0.0
    for players in (3, 6):
        rng = random.Random(players)
        state = GAME.initial_state(players, seed=players)
        while not GAME.is_terminal(state):
            request = _request(state)
            start = time.perf_counter()
            action = choose(request, rng)
            worst = max(worst, time.perf_counter() - start)
            assert action in request["legal_actions"]
            state = GAME.apply(state, {state.active: action})
    assert worst < 0.1, f"slowest decision {worst * 1e3:.0f} ms"


def test_crow_losses_from_the_largest_other_tree_equal_the_whole_orchards_scores() -> None:
    """``_drop``'s shortcut (the search calls it thousands of times a decision) against its definition:
    the orchard's score before less its score after the crow eats."""
    rng = random.Random(3)
    for _ in range(2000):
        fruits = rng.sample(strategy.FRUITS, rng.randint(1, 5))
        orchard = {f: (rng.randint(1, 12), None, False) for f in fruits}
        fruit, cards = rng.choice([*fruits, "grapes"]), rng.choice([1, 2, strategy.CARDS_PER_FRUIT])
        after = [max(0, t[0] - cards) if f == fruit else t[0] for f, t in orchard.items()]
        assert strategy._drop(orchard, fruit, cards) == strategy._orchard_score(orchard) - strategy._score(after)
        others = strategy._largest_others(orchard)
        assert all(others[f] == max((t[0] for g, t in orchard.items() if g != f), default=0) for f in fruits)
