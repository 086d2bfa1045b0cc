"""The 65 cards as data, and the wire names the engine uses for them everywhere.

A card is a string: a fruit kind (``"apples"``), the same kind marked juicy (``"apples*"``),
``"crow"`` (a lone crow), ``"flock"`` (a flock of crows) or ``"scarecrow"``. Cards of one name are
interchangeable, so hands and piles are tuples of names kept in ``CARD_ORDER``.
"""

from __future__ import annotations

from collections.abc import Iterable

FRUITS: tuple[str, ...] = ("cherries", "apples", "oranges", "bananas", "grapes")
JUICY_MARK = "*"
CROW = "crow"
FLOCK = "flock"
SCARECROW = "scarecrow"
CROW_CARDS: tuple[str, ...] = (CROW, FLOCK)

#: Confirmed counts (DECISIONS section 2): 9 cards per fruit, 10 scarecrows, 8 crows, 2 flocks.
CARDS_PER_FRUIT = 9
SCARECROWS = 10
SINGLE_CROWS = 8
FLOCKS = 2
DECK_SIZE = CARDS_PER_FRUIT * len(FRUITS) + SCARECROWS + SINGLE_CROWS + FLOCKS

#: Stable order for hands, piles and legal actions: each fruit, then its juicy card, then the birds.
CARD_ORDER: tuple[str, ...] = (
    *(card for fruit in FRUITS for card in (fruit, fruit + JUICY_MARK)),
    CROW,
    FLOCK,
    SCARECROW,
)
CARD_INDEX: dict[str, int] = {card: i for i, card in enumerate(CARD_ORDER)}
FRUIT_INDEX: dict[str, int] = {fruit: i for i, fruit in enumerate(FRUITS)}
#: The fruit kind of every fruit card, juicy or not.
FRUIT_OF: dict[str, str] = {card: card.rstrip(JUICY_MARK) for card in CARD_ORDER[: 2 * len(FRUITS)]}


def juicy(fruit: str) -> str:
    return fruit + JUICY_MARK


def is_juicy(card: str) -> bool:
    return card[-1] == JUICY_MARK


def deck_counts(juicy_counts: tuple[int, ...]) -> tuple[tuple[str, int], ...]:
    """How many cards of each name make up the deck, in ``CARD_ORDER``."""
    counts: list[tuple[str, int]] = []
    for fruit, j in zip(FRUITS, juicy_counts, strict=True):
        counts.append((fruit, CARDS_PER_FRUIT - j))
        counts.append((juicy(fruit), j))
    counts += [(CROW, SINGLE_CROWS), (FLOCK, FLOCKS), (SCARECROW, SCARECROWS)]
    return tuple(counts)


def sort_cards(cards: Iterable[str]) -> tuple[str, ...]:
    """Cards in ``CARD_ORDER``: the canonical form of any hand, pile or list in an action."""
    return tuple(sorted(cards, key=CARD_INDEX.__getitem__))


def take_cards(hand: tuple[str, ...], cards: tuple[str, ...]) -> tuple[str, ...] | None:
    """``hand`` without ``cards`` (a multiset difference), or None if the hand lacks one of them."""
    rest = list(hand)
    for card in cards:
        try:
            rest.remove(card)
        except ValueError:
            return None
    return tuple(rest)
