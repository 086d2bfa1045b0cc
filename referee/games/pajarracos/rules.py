"""One match's fixed rules: player count and the parameters, validated once at setup.

The number of juicy cards per fruit is a RECONSTRUCTION (no source gives it): 1 juicy + 8 ordinary
per fruit by default, replaceable through the ``juicy_per_fruit`` parameter.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from referee.errors import RulesError
from referee.games.pajarracos.cards import CARDS_PER_FRUIT, FRUITS, deck_counts

#: RECONSTRUCTION: juicy cards per fruit kind (the rest of the 9 are ordinary).
DEFAULT_JUICY_PER_FRUIT = 1
HAND_SIZE = 5
MIN_PLAYERS = 3
MAX_PLAYERS = 6

PARAM_NAMES = frozenset({"juicy_per_fruit", "allow_two_players"})


@dataclass(frozen=True)
class Rules:
    """Everything fixed for one match."""

    num_players: int
    juicy: tuple[int, ...]  # juicy cards per fruit, in FRUITS order (RECONSTRUCTION)
    two_player_mode: bool  # the flagged, unofficial 2-player match
    deck: tuple[tuple[str, int], ...]  # (card, count) in CARD_ORDER
    seat_sets: tuple[frozenset[int], ...]  # frozenset({seat}) per seat, shared by to_act
    juicy_items: tuple[tuple[str, int], ...]  # (fruit, juicy count) pairs, for views
    hand_size: int = HAND_SIZE


def check_params(params: Mapping[str, Any] | None) -> dict[str, Any]:
    """Refuse unknown parameter names and non-mapping parameters."""
    if params is None:
        return {}
    if not isinstance(params, Mapping):
        raise RulesError(f"params must be an object, got {params!r}")
    unknown = sorted(set(params) - PARAM_NAMES)
    if unknown:
        raise RulesError(f"unknown parameter(s) {unknown}; known: {sorted(PARAM_NAMES)}")
    allow = params.get("allow_two_players", False)
    if not isinstance(allow, bool):
        raise RulesError(f"allow_two_players must be true or false, got {allow!r}")
    return dict(params)


def player_range(params: Mapping[str, Any]) -> tuple[int, int]:
    """3-6 players; 2 only when the unofficial two-player mode is asked for."""
    low = 2 if params.get("allow_two_players", False) else MIN_PLAYERS
    return low, MAX_PLAYERS


def check_player_count(num_players: int, params: Mapping[str, Any] | None) -> dict[str, Any]:
    """The checked parameters, once ``num_players`` is known to be allowed by them."""
    checked = check_params(params)
    low, high = player_range(checked)
    if not low <= num_players <= high:
        extra = "" if low == 2 else " (2 only with the unofficial parameter allow_two_players: true)"
        raise RulesError(f"pajarracos needs {low}-{high} players{extra}, got {num_players}")
    return checked


def build_rules(num_players: int, params: Mapping[str, Any] | None) -> Rules:
    checked = check_player_count(num_players, params)
    juicy = _juicy_counts(checked.get("juicy_per_fruit", DEFAULT_JUICY_PER_FRUIT))
    return Rules(
        num_players=num_players,
        juicy=juicy,
        two_player_mode=num_players == 2,
        deck=deck_counts(juicy),
        seat_sets=tuple(frozenset((seat,)) for seat in range(num_players)),
        juicy_items=tuple(zip(FRUITS, juicy, strict=True)),
    )


def _juicy_counts(value: Any) -> tuple[int, ...]:
    """An integer for every fruit, or an object {fruit: count} (fruits left out keep the default)."""
    if isinstance(value, Mapping):
        unknown = sorted(set(value) - set(FRUITS))
        if unknown:
            raise RulesError(f"juicy_per_fruit names unknown fruit(s) {unknown}; fruits: {list(FRUITS)}")
        counts = tuple(value.get(fruit, DEFAULT_JUICY_PER_FRUIT) for fruit in FRUITS)
    else:
        counts = (value,) * len(FRUITS)
    for count in counts:
        if not isinstance(count, int) or isinstance(count, bool) or not 0 <= count <= CARDS_PER_FRUIT:
            raise RulesError(
                f"juicy_per_fruit must be an integer 0-{CARDS_PER_FRUIT} or an object of such "
                f"integers per fruit, got {value!r}"
            )
    return counts
