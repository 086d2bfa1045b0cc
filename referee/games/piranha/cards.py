"""Move cards: a direction and 1-3 arrows, encoded on the wire as ``"N1"`` ... ``"W3"``.

N moves up the board (row - 1), E right (col + 1), S down (row + 1), W left (col - 1).
"""

from __future__ import annotations

from collections.abc import Iterable

DIRECTIONS: dict[str, tuple[int, int]] = {"N": (-1, 0), "E": (0, 1), "S": (1, 0), "W": (0, -1)}

#: One player's set, in the stable order used for hands and legal actions.
FULL_SET: tuple[str, ...] = tuple(f"{d}{k}" for d in DIRECTIONS for k in (1, 2, 3))
FULL_HAND: frozenset[str] = frozenset(FULL_SET)
_ORDER = {card: i for i, card in enumerate(FULL_SET)}


def arrows(card: str) -> int:
    return int(card[1])


def delta(card: str) -> tuple[int, int]:
    return DIRECTIONS[card[0]]


def sorted_cards(cards: Iterable[str]) -> list[str]:
    """Cards in the stable N1, N2, N3, E1, ... order."""
    return sorted(cards, key=_ORDER.__getitem__)


def refill(hand: Iterable[str]) -> int:
    """Stones earned at an evaluation: 1 per 1-arrow card, 1 per pair of 2-arrow cards."""
    ones = twos = 0
    for card in hand:
        k = card[1]
        if k == "1":
            ones += 1
        elif k == "2":
            twos += 1
    return ones + twos // 2


def printed_logs_doubled(hand: Iterable[str]) -> int:
    """Twice the Korean cards' printed log values (1 per 1-arrow, 0.5 per 2-arrow): the tiebreak, exact."""
    return sum(2 if c[1] == "1" else 1 if c[1] == "2" else 0 for c in hand)
