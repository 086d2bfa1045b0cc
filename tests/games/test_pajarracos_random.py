"""Pajarracos under seeded random play: card conservation, valid endings, and the legal-action list
matching exactly what ``apply`` accepts."""

from __future__ import annotations

import copy
import json
import pickle
import random
from itertools import product

import pytest

from referee.errors import RulesError
from referee.games.pajarracos import PAJARRACOS as GAME
from referee.games.pajarracos.cards import (
    CARD_ORDER,
    CROW,
    CROW_CARDS,
    FLOCK,
    FRUITS,
    SCARECROW,
    deck_counts,
    juicy,
)
from referee.games.pajarracos.scenario import build_state
from referee.games.pajarracos.state import EXTRA_ACTION, MORE_CROWS, MORE_SCARECROWS, TURN

TWO = {"allow_two_players": True}


def random_match(players: int, seed: int, params: dict | None = None):
    """Yield every state of one random match, the final one included."""
    rng = random.Random(seed * 31 + players)
    state = GAME.initial_state(players, seed, params)
    yield state
    while not GAME.is_terminal(state):
        (seat,) = GAME.to_act(state)
        state = GAME.apply(state, {seat: rng.choice(GAME.legal_actions(state, seat))})
        yield state


def test_thousands_of_matches_conserve_all_65_cards_and_end_with_a_result() -> None:
    """Every card is always somewhere exactly once (hands, reserve, discard pile, trees with their
    crows and scarecrows); every match ends with a valid competition ranking."""
    matches = 0
    for players, params in [(2, TWO), (3, None), (4, None), (5, None), (6, None)]:
        for seed in range(500):
            expected = None
            state = None
            for state in random_match(players, seed, params):
                counts = GAME.conservation(state)
                expected = expected or counts
                assert counts == expected
                if not GAME.is_terminal(state):
                    assert len(GAME.to_act(state)) == 1
            assert expected["cards"] == 65 and GAME.to_act(state) == frozenset()
            result = GAME.result(state)
            assert len(result["ranks"]) == players and min(result["ranks"]) == 1
            assert all(1 <= rank <= players for rank in result["ranks"])
            order = sorted(range(players), key=lambda s: result["ranks"][s])
            assert [result["scores"][s] for s in order] == sorted(result["scores"], reverse=True)
            matches += 1
    assert matches == 2500


def test_views_are_json_and_apply_never_mutates_its_input() -> None:
    for seed in range(12):
        rng = random.Random(seed)
        state = GAME.initial_state(3 + seed % 4, seed)
        while not GAME.is_terminal(state):
            views = [json.dumps(GAME.view(state, s)) for s in range(state.num_players)]
            json.dumps(GAME.public_view(state))
            before = pickle.dumps(copy.deepcopy(state))
            action = rng.choice(GAME.legal_actions(state, state.active))
            frozen = json.dumps(action)
            state_after = GAME.apply(state, {state.active: action})
            assert pickle.dumps(copy.deepcopy(state)) == before
            assert [json.dumps(GAME.view(state, s)) for s in range(state.num_players)] == views
            assert json.dumps(action) == frozen
            state = state_after
        json.dumps(GAME.public_view(state))


def candidates(state) -> list[dict]:
    """A superset of the legal actions: the spellings the wire format allows over this table (for
    ``crow_from``, every crow's tree and two trees without a crow)."""
    n = state.num_players
    spots = [{"orchard": s, "fruit": f} for s in range(n) for f in FRUITS]
    crowed = [{"orchard": s, "fruit": t.fruit} for s, orchard in enumerate(state.orchards) for t in orchard if t.crow]
    pulls = crowed + [s for s in spots if s not in crowed][:2]
    out: list[dict] = [{"type": "done"}]
    for kind in FRUITS:
        for o, j in product(range(4), range(3)):
            if not o + j:
                continue
            cards = [kind] * o + [juicy(kind)] * j
            for target in range(n):
                out.append({"type": "fruit", "orchard": target, "cards": cards})
                out += [{"type": "fruit", "orchard": target, "cards": cards, "crow_from": s} for s in pulls]
    out += [
        {"type": "crow", "card": c, "orchard": s["orchard"], "fruit": s["fruit"]} for c in CROW_CARDS for s in spots
    ]
    for kind in FRUITS:
        out += [{"type": "scarecrow", "fruit": kind, "mode": m} for m in ("protect", "shoo_out")]
        out += [{"type": "scarecrow", "fruit": kind, "mode": "shoo_to", "to": s} for s in spots]
    hand = state.hands[state.active]
    names = sorted(set(hand), key=CARD_ORDER.index)
    for combo in product(*(range(hand.count(c) + 2) for c in names)):
        out.append({"type": "discard", "cards": [c for c, k in zip(names, combo, strict=True) for _ in range(k)]})
    return out


def random_table(rng: random.Random):
    """A random mid-game table: trees with crows, flocks and scarecrows, juicy cards everywhere, any
    phase: the situations random play seldom reaches."""
    players = rng.randint(3, 6)
    pool = [card for card, count in deck_counts((2,) * 5) for _ in range(count)]
    rng.shuffle(pool)
    orchards, birds = [], [CROW] * 8 + [FLOCK] * 2
    for _ in range(players):
        trees = []
        for kind in rng.sample(FRUITS, rng.randint(0, 4)):
            ordinary = min(rng.randint(0, 3), pool.count(kind))
            juicy_cards = min(rng.randint(0, 1), pool.count(juicy(kind)))
            if not ordinary + juicy_cards:
                continue
            for card in [kind] * ordinary + [juicy(kind)] * juicy_cards:
                pool.remove(card)
            extra = rng.choice(["", "", " scarecrow", " bird", " bird"])
            if extra == " bird":
                extra = " " + birds.pop() if birds and pool.count(birds[-1]) else ""
                if extra:
                    pool.remove(extra.strip())
            elif extra and SCARECROW in pool:
                pool.remove(SCARECROW)
            else:
                extra = ""
            trees.append(f"{kind}={ordinary}+{juicy_cards}*{extra}")
        orchards.append("; ".join(trees))
    hands = []
    for _ in range(players):
        size = rng.randint(1, 5)
        hands.append(" ".join(pool[:size]))
        del pool[:size]
    active = rng.randrange(players)
    phase = rng.choice([TURN, TURN, EXTRA_ACTION, MORE_CROWS, MORE_SCARECROWS])
    own = [part.split("=")[0] for part in orchards[active].split("; ") if part]
    scarecrowed = " ".join(rng.sample(own, rng.randint(0, len(own)))) if phase == MORE_SCARECROWS else ""
    return build_state(
        hands,
        orchards,
        active=active,
        phase=phase,
        scarecrowed=scarecrowed,
        shooed_out=phase == MORE_SCARECROWS and rng.random() < 0.5,
        params={"juicy_per_fruit": 2},
    )


def key(action: dict) -> str:
    return json.dumps(action, sort_keys=True)


def assert_listed_is_accepted(state) -> None:
    seat = state.active
    listed = GAME.legal_actions(state, seat)
    assert listed and listed == GAME.legal_actions(state, seat)
    listed_keys = {key(a) for a in listed}
    assert len(listed_keys) == len(listed)
    accepted = set()
    for action in candidates(state):
        try:
            canonical = GAME.canonical_action(state, seat, action)
        except RulesError:
            with pytest.raises(RulesError):
                GAME.apply(state, {seat: action})
            continue
        accepted.add(key(canonical))
    assert accepted == listed_keys
    for action in listed:
        assert GAME.canonical_action(state, seat, action) == action
        after = GAME.apply(state, {seat: action})
        assert GAME.conservation(after) == GAME.conservation(state)


def test_the_legal_list_is_exactly_what_apply_accepts_in_random_play() -> None:
    """Every listed action is accepted; every other candidate spelling is refused with a RulesError;
    the list has no duplicates and comes in a stable order."""
    checked = 0
    for players, seed in [(3, 1), (4, 2), (5, 3), (6, 4), (2, 7)]:
        for index, state in enumerate(random_match(players, seed, TWO if players == 2 else None)):
            if not GAME.is_terminal(state) and index % 4 == 0:
                assert_listed_is_accepted(state)
                checked += 1
    assert checked > 30


def test_the_legal_list_is_exactly_what_apply_accepts_on_random_tables() -> None:
    rng = random.Random(2024)
    for _ in range(60):
        assert_listed_is_accepted(random_table(rng))


def test_any_card_order_and_key_order_is_accepted() -> None:
    rng = random.Random(3)
    for state in random_match(4, 9):
        if GAME.is_terminal(state):
            break
        seat = state.active
        for action in GAME.legal_actions(state, seat)[:40]:
            shuffled = json.loads(json.dumps(action))
            if "cards" in shuffled:
                rng.shuffle(shuffled["cards"])
            items = list(shuffled.items())
            rng.shuffle(items)
            shuffled = dict(items)
            assert GAME.canonical_action(state, seat, shuffled) == action
            assert GAME.apply(state, {seat: shuffled}) == GAME.apply(state, {seat: action})


@pytest.mark.parametrize("bad", [None, "garbage", 3, [], {}, {"type": "fly"}, {"not": "an action"}])
def test_garbage_is_refused_clearly(bad) -> None:
    state = GAME.initial_state(3, 3)
    with pytest.raises(RulesError):
        GAME.apply(state, {state.active: bad})
    with pytest.raises(RulesError):
        GAME.apply(state, {})
    with pytest.raises(RulesError):
        GAME.apply(state, {state.active: GAME.legal_actions(state, state.active)[0], 7: None})
