"""Build a state from a readable description: for scenario tests, docs and bot authors' experiments.

    build_state(
        hands=["apples apples* crow", "scarecrow grapes", "flock"],
        orchards=["apples=3 crow; cherries=1+1*", "grapes=2 scarecrow", ""],
        active=0,
    )

A hand is card names separated by spaces. An orchard is trees separated by ``;``; a tree is
``<fruit>=<ordinary>``, ``<fruit>=<ordinary>+<juicy>*`` or ``<fruit>=<juicy>*`` (juicy cards lie on
top), then optionally ``crow`` or ``flock``, and/or ``scarecrow``. Cards the description does not
place make up the reserve (or, when ``reserve`` is given, the bottom of the discard pile), so the
65 cards are always all there.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from referee.errors import RulesError
from referee.games.pajarracos.cards import CARD_ORDER, CROW_CARDS, FRUITS, SCARECROW, juicy, sort_cards
from referee.games.pajarracos.game import PAJARRACOS
from referee.games.pajarracos.rules import build_rules
from referee.games.pajarracos.state import OVER, PHASES, TURN, Orchard, PajarracosState, Tree


def build_state(
    hands: Sequence[str],
    orchards: Sequence[str] | None = None,
    *,
    active: int = 0,
    discard: str = "",
    reserve: str | None = None,
    phase: str = TURN,
    turn: int = 1,
    shooed_out: bool = False,
    scarecrowed: str = "",
    params: Mapping[str, Any] | None = None,
    seed: int = 0,
) -> PajarracosState:
    """A state with these hands and orchards; ``reserve`` lists the next card to be drawn first.
    ``shooed_out`` and ``scarecrowed`` (own fruit kinds) describe a scarecrow action under way."""
    players = len(hands)
    rules = build_rules(players, params)
    if phase not in PHASES or (phase == OVER and any(hands)):
        raise RulesError(f"phase must be one of {list(PHASES)} (over only with empty hands), got {phase!r}")
    orchard_texts = list(orchards) if orchards is not None else [""] * players
    if len(orchard_texts) != players or not 0 <= active < players:
        raise RulesError("give one orchard per hand and an active seat among them")
    built_hands = tuple(sort_cards(_cards(text)) for text in hands)
    built_orchards = tuple(_orchard(text) for text in orchard_texts)
    discard_cards = _cards(discard)
    reserve_cards = list(reversed(_cards(reserve))) if reserve is not None else []
    used = Counter(card for hand in built_hands for card in hand)
    used.update(discard_cards)
    used.update(reserve_cards)
    for orchard in built_orchards:
        for tree in orchard:
            used.update(tree.cards)
            used.update([tree.crow] if tree.crow else [])
            used.update([SCARECROW] if tree.scarecrow else [])
    rest = []
    for card, count in rules.deck:
        if used[card] > count:
            raise RulesError(f"the description uses {used[card]} {card!r} cards; the deck has {count}")
        rest += [card] * (count - used[card])
    if reserve is None:
        reserve_cards = rest
    else:
        discard_cards = rest + discard_cards
    return PajarracosState(
        rules=rules,
        seed=seed,
        phase=phase,
        active=active,
        turn=turn,
        hands=built_hands,
        reserve=tuple(reserve_cards),
        discard=tuple(discard_cards),
        orchards=built_orchards,
        shooed_out=shooed_out,
        scarecrowed=tuple(scarecrowed.split()),
    )


def _cards(text: str) -> list[str]:
    cards = text.split()
    unknown = sorted(set(cards) - set(CARD_ORDER))
    if unknown:
        raise RulesError(f"unknown card name(s) {unknown}; cards: {list(CARD_ORDER)}")
    return cards


def _orchard(text: str) -> Orchard:
    trees: dict[str, Tree] = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        tree = _tree(part)
        if tree.fruit in trees:
            raise RulesError(f"two {tree.fruit} trees in one orchard: {text!r}")
        trees[tree.fruit] = tree
    return tuple(trees[fruit] for fruit in FRUITS if fruit in trees)


def _tree(text: str) -> Tree:
    head, *extras = text.split()
    fruit, _, counts = head.partition("=")
    if fruit not in FRUITS:
        raise RulesError(f"unknown fruit {fruit!r} in tree {text!r}; fruits: {list(FRUITS)}")
    ordinary, juicy_count = 0, 0
    for term in counts.split("+"):
        if term.endswith("*") and term[:-1].isdigit():
            juicy_count += int(term[:-1])
        elif term.isdigit():
            ordinary += int(term)
        else:
            raise RulesError(f"tree {text!r}: write <fruit>=<n>, <fruit>=<n>+<j>* or <fruit>=<j>*")
    if not ordinary + juicy_count:
        raise RulesError(f"tree {text!r} has no cards: an empty tree does not exist")
    birds = [e for e in extras if e in CROW_CARDS]
    if len(birds) > 1 or any(e not in (*CROW_CARDS, SCARECROW) for e in extras):
        raise RulesError(f"tree {text!r}: after the counts, at most one of crow/flock, and/or scarecrow")
    scarecrow = SCARECROW in extras
    if birds and scarecrow:
        raise RulesError(f"tree {text!r}: a tree never holds a crow and a scarecrow together")
    cards = (fruit,) * ordinary + (juicy(fruit),) * juicy_count
    return Tree(fruit, cards, birds[0] if birds else None, scarecrow)


# -- actions, spelled briefly (the wire format is in docs/games/pajarracos.md) -------------------
def fruit(orchard: int, *cards: str, crow_from: tuple[int, str] | None = None) -> dict[str, Any]:
    action: dict[str, Any] = {"type": "fruit", "orchard": orchard, "cards": list(cards)}
    if crow_from is not None:
        action["crow_from"] = {"orchard": crow_from[0], "fruit": crow_from[1]}
    return action


def crow(card: str, orchard: int, fruit_kind: str) -> dict[str, Any]:
    return {"type": "crow", "card": card, "orchard": orchard, "fruit": fruit_kind}


def scarecrow(fruit_kind: str, mode: str, to: tuple[int, str] | None = None) -> dict[str, Any]:
    action: dict[str, Any] = {"type": "scarecrow", "fruit": fruit_kind, "mode": mode}
    if to is not None:
        action["to"] = {"orchard": to[0], "fruit": to[1]}
    return action


def discard(*cards: str) -> dict[str, Any]:
    return {"type": "discard", "cards": list(cards)}


DONE: dict[str, Any] = {"type": "done"}


def step(state: PajarracosState, *actions: Mapping[str, Any]) -> PajarracosState:
    """Apply ``actions`` one after another, each for the seat whose decision it is."""
    for action in actions:
        state = PAJARRACOS.apply(state, {state.active: action})
    return state
