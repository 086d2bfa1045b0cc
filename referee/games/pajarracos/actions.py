"""Actions on the wire: every legal one, listed in a stable order, and the parser that turns a bot's
answer into a move after checking it against the same rules.

Wire forms (JSON objects; key order never matters, card lists are read as multisets):
  {"type": "fruit", "orchard": 2, "cards": ["apples", "apples*"],
   "crow_from": {"orchard": 0, "fruit": "grapes"}}
  {"type": "crow", "card": "flock", "orchard": 1, "fruit": "cherries"}
  {"type": "scarecrow", "fruit": "apples", "mode": "protect" | "shoo_out"}
  {"type": "scarecrow", "fruit": "apples", "mode": "shoo_to", "to": {"orchard": 1, "fruit": "grapes"}}
  {"type": "discard", "cards": ["crow", "oranges"]}
  {"type": "done"}                 (ends a crow or scarecrow action that is under way)
``crow_from`` is present exactly when a juicy card is played while crows sit on trees.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from referee.errors import RulesError
from referee.games.pajarracos import orchards as orch
from referee.games.pajarracos.cards import (
    CARD_INDEX,
    CARD_ORDER,
    CROW_CARDS,
    FRUIT_OF,
    FRUITS,
    SCARECROW,
    is_juicy,
    juicy,
    take_cards,
)
from referee.games.pajarracos.state import MORE_CROWS, MORE_SCARECROWS, PajarracosState, Spot

FRUIT = "fruit"
CROW_ACTION = "crow"
SCARECROW_ACTION = "scarecrow"
DISCARD = "discard"
DONE = "done"
PROTECT = "protect"
SHOO_OUT = "shoo_out"
SHOO_TO = "shoo_to"
MODES = (PROTECT, SHOO_OUT, SHOO_TO)

#: A parsed move: ("fruit", orchard, cards, crow_from | None, rest of hand), ("crow", card, spot),
#: ("scarecrow", fruit, mode, to | None), ("discard", cards, rest of hand) or ("done",).
Move = tuple


# -- every legal action ------------------------------------------------------------------------
def legal_actions(state: PajarracosState, seat: int) -> list[dict[str, Any]]:
    """Every legal action of the active ``seat``, in a stable order."""
    phase = state.phase
    if phase == MORE_CROWS:
        return [{"type": DONE}, *crow_actions(state, seat)]
    if phase == MORE_SCARECROWS:
        return [{"type": DONE}, *scarecrow_actions(state, seat)]
    out = fruit_actions(state, seat)
    out += crow_actions(state, seat)
    out += scarecrow_actions(state, seat)
    out += discard_actions(state.hands[seat])
    return out


def fruit_actions(state: PajarracosState, seat: int) -> list[dict[str, Any]]:
    """1+ cards of one kind into one orchard whose tree of that kind takes fruit; a juicy card names
    the crow it attracts whenever crows are out."""
    groups = _fruit_plays(state.hands[seat])
    if not groups:
        return []
    closed = set()  # (seat, fruit) of trees with a crow or a scarecrow: no fruit may be added
    crows = []
    for owner, orchard in enumerate(state.orchards):
        for tree in orchard:
            if tree.crow is not None:
                closed.add((owner, tree.fruit))
                crows.append({"orchard": owner, "fruit": tree.fruit})
            elif tree.scarecrow:
                closed.add((owner, tree.fruit))
    seats = range(state.rules.num_players)
    out: list[dict[str, Any]] = []
    for fruit, plain, with_juicy in groups:
        targets = [t for t in seats if (t, fruit) not in closed] if closed else seats
        # a play's card list is shared by its actions within this one answer
        out += [{"type": FRUIT, "orchard": t, "cards": cards} for cards in map(list, plain) for t in targets]
        if not with_juicy:
            continue
        if crows:
            out += [
                {"type": FRUIT, "orchard": t, "cards": cards, "crow_from": crow}
                for cards in map(list, with_juicy)
                for t in targets
                for crow in crows
            ]
        else:
            out += [{"type": FRUIT, "orchard": t, "cards": cards} for cards in map(list, with_juicy) for t in targets]
    return out


@lru_cache(maxsize=512)  # bounded: a worker plays for months
def _fruit_plays(
    hand: tuple[str, ...],
) -> tuple[tuple[str, tuple[tuple[str, ...], ...], tuple[tuple[str, ...], ...]], ...]:
    """Per fruit kind in ``hand``: (fruit, plays without a juicy card, plays with one or more)."""
    groups = []
    for fruit in FRUITS:
        ordinary, juicy_cards = hand.count(fruit), hand.count(juicy(fruit))
        if not ordinary and not juicy_cards:
            continue
        plain = tuple((fruit,) * o for o in range(1, ordinary + 1))
        with_juicy = tuple(
            (fruit,) * o + (juicy(fruit),) * j for j in range(1, juicy_cards + 1) for o in range(ordinary + 1)
        )
        groups.append((fruit, plain, with_juicy))
    return tuple(groups)


def crow_actions(state: PajarracosState, seat: int) -> list[dict[str, Any]]:
    """One crow card onto another player's tree without crow or scarecrow (a crow action places its
    cards one at a time: see ``MORE_CROWS``)."""
    hand = state.hands[seat]
    cards = [card for card in CROW_CARDS if card in hand]
    if not cards:
        return []
    spots = orch.landing_spots(state.orchards, seat)
    return [{"type": CROW_ACTION, "card": c, "orchard": s, "fruit": f} for c in cards for s, f in spots]


def scarecrow_actions(state: PajarracosState, seat: int) -> list[dict[str, Any]]:
    """One scarecrow onto an own tree not yet given one: protect it, or shoo its crow out or away."""
    if SCARECROW not in state.hands[seat]:
        return []
    out: list[dict[str, Any]] = []
    spots = None
    for tree in state.orchards[seat]:
        if tree.scarecrow or tree.fruit in state.scarecrowed:
            continue
        fruit = tree.fruit
        if tree.crow is None:
            out.append({"type": SCARECROW_ACTION, "fruit": fruit, "mode": PROTECT})
            continue
        out.append({"type": SCARECROW_ACTION, "fruit": fruit, "mode": SHOO_OUT})
        if spots is None:
            spots = orch.landing_spots(state.orchards, seat)
        out.extend(
            {"type": SCARECROW_ACTION, "fruit": fruit, "mode": SHOO_TO, "to": {"orchard": s, "fruit": f}}
            for s, f in spots
        )
    return out


def discard_actions(hand: tuple[str, ...]) -> list[dict[str, Any]]:
    """Every non-empty sub-multiset of the hand (at most 31 for a hand of five)."""
    return [{"type": DISCARD, "cards": list(cards)} for cards in _discard_sets(hand)]


@lru_cache(maxsize=512)  # bounded: a worker plays for months
def _discard_sets(hand: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """The sub-multisets of a hand, fewest cards first (built card kind by card kind: cheap enough that
    the small cache only saves repeats)."""
    sets: list[tuple[str, ...]] = [()]
    for card in CARD_ORDER:
        count = hand.count(card)
        if count:
            sets = [chosen + (card,) * k for chosen in sets for k in range(count + 1)]
    sets.sort(key=len)
    return tuple(sets[1:])


def can_place_crow(state: PajarracosState, seat: int) -> bool:
    hand = state.hands[seat]
    return any(c in hand for c in CROW_CARDS) and bool(orch.landing_spots(state.orchards, seat))


def can_place_scarecrow(state: PajarracosState, seat: int) -> bool:
    if SCARECROW not in state.hands[seat]:
        return False
    return any(not t.scarecrow and t.fruit not in state.scarecrowed for t in state.orchards[seat])


# -- parsing a bot's answer --------------------------------------------------------------------
def parse(state: PajarracosState, seat: int, action: Any) -> Move:
    """The move ``action`` stands for, or a ``RulesError`` that says what is wrong with it."""
    if type(action) is not dict and not isinstance(action, Mapping):
        raise RulesError(f'an action is a JSON object with a "type", got {action!r}')
    kind = action.get("type")
    phase = state.phase
    if phase == MORE_CROWS and kind not in (CROW_ACTION, DONE):
        raise RulesError('a crow action is under way: place another crow card or answer {"type": "done"}')
    if phase == MORE_SCARECROWS and kind not in (SCARECROW_ACTION, DONE):
        raise RulesError('a scarecrow action is under way: place another scarecrow or answer {"type": "done"}')
    if kind == FRUIT:
        return _parse_fruit(state, seat, action)
    if kind == CROW_ACTION:
        return _parse_crow(state, seat, action)
    if kind == SCARECROW_ACTION:
        return _parse_scarecrow(state, seat, action)
    if kind == DISCARD:
        _keys(action, _DISCARD_KEYS)
        return (DISCARD, *_cards_from_hand(state, seat, action.get("cards")))
    if kind == DONE:
        if phase not in (MORE_CROWS, MORE_SCARECROWS):
            raise RulesError('"done" only ends a crow or scarecrow action that is under way')
        _keys(action, _DONE_KEYS)
        return (DONE,)
    raise RulesError(f"unknown action type {kind!r}; use fruit, crow, scarecrow or discard")


def _parse_fruit(state: PajarracosState, seat: int, action: Mapping[str, Any]) -> Move:
    _keys(action, _FRUIT_KEYS, _FRUIT_OPTIONAL)
    target = _seat(state, action.get("orchard"), "orchard")
    cards, rest = _cards_from_hand(state, seat, action.get("cards"))
    # canonical order keeps each fruit next to its juicy card, so the ends tell the kinds apart
    fruit = FRUIT_OF.get(cards[0])
    if fruit is None or FRUIT_OF.get(cards[-1]) != fruit:
        raise RulesError(f"a fruit action plays fruit cards of ONE kind, got {list(cards)}")
    if not orch.takes_fruit(state.orchards[target], fruit):
        raise RulesError(f"the {fruit} tree of orchard {target} has a crow or a scarecrow: no fruit may be added")
    crow_from = action.get("crow_from")
    if is_juicy(cards[-1]):
        crows = orch.crow_spots(state.orchards)
        if crows:
            spot = _spot(state, crow_from, "crow_from")
            if spot not in crows:
                raise RulesError(
                    f"crow_from must name a tree with a crow on it, one of "
                    f"{[{'orchard': s, 'fruit': f} for s, f in crows]}; got {crow_from!r}"
                )
            return (FRUIT, target, cards, spot, rest)
    if crow_from is not None:
        raise RulesError("crow_from is only given when a juicy card is played while crows sit on trees")
    return (FRUIT, target, cards, None, rest)


def _parse_crow(state: PajarracosState, seat: int, action: Mapping[str, Any]) -> Move:
    _keys(action, _CROW_KEYS)
    card = action.get("card")
    if card not in CROW_CARDS:
        raise RulesError(f'card must be "crow" or "flock", got {card!r}')
    if card not in state.hands[seat]:
        raise RulesError(f"seat {seat} holds no {card} card")
    spot = _spot_of(state, action["orchard"], action["fruit"], "crow target")
    if spot[0] == seat:
        raise RulesError("crows go onto OTHER players' trees")
    if spot not in orch.landing_spots(state.orchards, seat):
        raise RulesError(f"orchard {spot[0]} has no {spot[1]} tree free of crows and scarecrows")
    return (CROW_ACTION, card, spot)


def _parse_scarecrow(state: PajarracosState, seat: int, action: Mapping[str, Any]) -> Move:
    mode = action.get("mode")
    if mode not in MODES:
        raise RulesError(f"mode must be one of {list(MODES)}, got {mode!r}")
    _keys(action, _SHOO_TO_KEYS if mode == SHOO_TO else _SCARECROW_KEYS)
    if SCARECROW not in state.hands[seat]:
        raise RulesError(f"seat {seat} holds no scarecrow card")
    fruit = action.get("fruit")
    tree = orch.find(state.orchards[seat], fruit) if isinstance(fruit, str) else None
    if tree is None:
        raise RulesError(f"a scarecrow goes on one of your own trees; you have no {fruit!r} tree")
    if tree.scarecrow or fruit in state.scarecrowed:
        raise RulesError(f"your {fruit} tree already got a scarecrow")
    if mode == PROTECT:
        if tree.crow is not None:
            raise RulesError(f"your {fruit} tree has a crow: shoo it out or to another tree")
        return (SCARECROW_ACTION, fruit, mode, None)
    if tree.crow is None:
        raise RulesError(f"your {fruit} tree has no crow to shoo; protect it instead")
    if mode == SHOO_OUT:
        return (SCARECROW_ACTION, fruit, mode, None)
    spot = _spot(state, action.get("to"), "to")
    if spot not in orch.landing_spots(state.orchards, seat):
        raise RulesError(
            f"a crow can be shooed only onto another player's tree free of crows and scarecrows; "
            f"orchard {spot[0]} has no such {spot[1]} tree"
        )
    return (SCARECROW_ACTION, fruit, mode, spot)


def to_json(move: Move) -> dict[str, Any]:
    """The listed legal action a parsed move stands for (card lists in canonical order)."""
    kind = move[0]
    if kind == FRUIT:
        action = {"type": FRUIT, "orchard": move[1], "cards": list(move[2])}
        if move[3] is not None:
            action["crow_from"] = {"orchard": move[3][0], "fruit": move[3][1]}
        return action
    if kind == CROW_ACTION:
        return {"type": CROW_ACTION, "card": move[1], "orchard": move[2][0], "fruit": move[2][1]}
    if kind == SCARECROW_ACTION:
        action = {"type": SCARECROW_ACTION, "fruit": move[1], "mode": move[2]}
        if move[3] is not None:
            action["to"] = {"orchard": move[3][0], "fruit": move[3][1]}
        return action
    if kind == DISCARD:
        return {"type": DISCARD, "cards": list(move[1])}
    return {"type": DONE}


# -- small checks --------------------------------------------------------------------------------
_DISCARD_KEYS = frozenset({"type", "cards"})
_DONE_KEYS = frozenset({"type"})
_FRUIT_KEYS = frozenset({"type", "orchard", "cards"})
_FRUIT_OPTIONAL = frozenset({"crow_from"})
_CROW_KEYS = frozenset({"type", "card", "orchard", "fruit"})
_SCARECROW_KEYS = frozenset({"type", "fruit", "mode"})
_SHOO_TO_KEYS = _SCARECROW_KEYS | {"to"}


def _keys(action: Mapping[str, Any], required: frozenset[str], optional: frozenset[str] = frozenset()) -> None:
    keys = action.keys()
    if keys == required or (optional and required <= keys <= required | optional):
        return
    missing = sorted(required - keys)
    unknown = sorted(keys - required - optional)
    raise RulesError(
        f"a {action.get('type')} action has the keys {sorted(required | optional)}; "
        f"missing {missing}, unknown {unknown}"
    )


def _seat(state: PajarracosState, value: Any, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < state.num_players:
        raise RulesError(f"{what} must be a seat number 0-{state.num_players - 1}, got {value!r}")
    return value


def _spot(state: PajarracosState, value: Any, what: str) -> Spot:
    """A tree named as {"orchard": seat, "fruit": kind}."""
    if not isinstance(value, Mapping) or set(value) != {"orchard", "fruit"}:
        raise RulesError(f'{what} must be {{"orchard": seat, "fruit": kind}}, got {value!r}')
    return _spot_of(state, value["orchard"], value["fruit"], what)


def _spot_of(state: PajarracosState, orchard: Any, fruit: Any, what: str) -> Spot:
    if fruit not in FRUITS:
        raise RulesError(f"{what}: fruit must be one of {list(FRUITS)}, got {fruit!r}")
    return (_seat(state, orchard, f"{what} orchard"), fruit)


def _cards_from_hand(state: PajarracosState, seat: int, cards: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A non-empty list of card names held by ``seat``: (the cards in canonical order, the rest)."""
    canonical = None
    if type(cards) is list and cards:
        try:
            canonical = tuple(sorted(cards, key=CARD_INDEX.__getitem__))
        except (KeyError, TypeError):
            canonical = None
    if canonical is None:
        raise RulesError(f"cards must be a non-empty list of card names {list(CARD_ORDER)}, got {cards!r}")
    rest = take_cards(state.hands[seat], canonical)
    if rest is None:
        raise RulesError(f"seat {seat} does not hold {list(canonical)}; hand: {list(state.hands[seat])}")
    return canonical, rest
