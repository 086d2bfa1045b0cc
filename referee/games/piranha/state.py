"""One point of a Piranha Pedro match. Every field holds an immutable value, so a shallow clone is a
safe copy: the engine clones, then replaces whole fields, and never touches its input.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from referee.games.piranha.board import Cell
from referee.games.piranha.editions import Rules

MOVE_PIRANHA = "move_piranha"
CHOOSE_CARD = "choose_card"
TAKE_PIRANHA = "take_piranha"
OVER = "over"

#: One revealed card: (move round, seat, card, fall cause or None).
Reveal = tuple[int, int, str, "str | None"]


@dataclass(slots=True, eq=True)
class PiranhaState:
    rules: Rules
    seed: int
    params: dict[str, Any]  # as given, echoed in replays; never mutated
    phase: str
    sombrero: int
    move_round: int  # 1-based count of move rounds started in the match
    pedro: Cell
    board_stones: frozenset[Cell]
    piranhas: tuple[Cell, ...]  # on the board, sorted
    stones: tuple[int, ...]  # each seat's personal supply
    supply: int | None  # general supply; None = unlimited
    taken: tuple[tuple[Cell, ...], ...]  # piranhas each seat has taken, by square
    hands: tuple[frozenset[str], ...]
    played: tuple[tuple[str, ...], ...]  # revealed since everyone last took their 12 back
    pending: tuple[tuple[str, ...], ...]  # committed and not yet revealed: private to each seat
    fall: dict[str, Any] | None  # the fall awaiting its piranha choice
    history: tuple[Reveal, ...]
    # advanced variant only
    barrel_bag: tuple[int, ...]  # indexes into rules.barrels, in draw order: hidden from everyone
    kept_barrels: tuple[int, ...]
    scores: tuple[int, ...]
    barrel_log: tuple[tuple[int, int, int, str], ...]  # (move round, seat, barrel index, effect)
    stalled: bool = False  # ended by the move-round cap

    def clone(self) -> PiranhaState:
        new = object.__new__(PiranhaState)
        for name in _FIELD_NAMES:
            object.__setattr__(new, name, getattr(self, name))
        return new

    @property
    def num_players(self) -> int:
        return self.rules.num_players


_FIELD_NAMES = tuple(f.name for f in fields(PiranhaState))
