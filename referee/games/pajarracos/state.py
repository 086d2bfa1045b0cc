"""One point of a Pajarracos match. Every field holds an immutable value, so a shallow clone is a
safe copy: the engine clones, then replaces whole fields, and never touches its input.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from referee.games.pajarracos.rules import Rules

# The decision the active seat faces (``Game.decision``), or OVER. Plain strings, not an enum:
# they are read on every step, and an enum member lookup costs ten times a constant's.
TURN = "turn"  # the one action of a turn
EXTRA_ACTION = "extra_action"  # the extra action earned by shooing a crow out of the orchard
MORE_CROWS = "more_crows"  # a crow action under way: place another crow card, or done
MORE_SCARECROWS = "more_scarecrows"  # a scarecrow action under way: place another, or done
OVER = "over"
PHASES: tuple[str, ...] = (TURN, EXTRA_ACTION, MORE_CROWS, MORE_SCARECROWS, OVER)


class Tree(NamedTuple):
    """A fruit tree: its cards bottom to top (never empty), the bird on it, its scarecrow."""

    fruit: str
    cards: tuple[str, ...]
    crow: str | None = None  # "crow", "flock" or None
    scarecrow: bool = False


Orchard = tuple[Tree, ...]  # trees in FRUITS order, at most one per kind
Spot = tuple[int, str]  # (orchard seat, fruit kind): names one tree


@dataclass(slots=True, eq=True)
class PajarracosState:
    rules: Rules
    seed: int
    phase: str  # one of PHASES
    active: int  # the seat whose turn it is
    turn: int  # 1-based count of turns started in the match
    hands: tuple[tuple[str, ...], ...]  # sorted in CARD_ORDER; private to each seat
    reserve: tuple[str, ...]  # face down; the next card drawn is the last one; order private to all
    discard: tuple[str, ...]  # face up, oldest first
    orchards: tuple[Orchard, ...]
    shooed_out: bool  # the scarecrow action under way has shooed a crow out: an extra action is earned
    scarecrowed: tuple[str, ...]  # own trees that got a scarecrow in the scarecrow action under way

    def clone(self) -> PajarracosState:
        """A shallow copy: safe because every field holds an immutable value."""
        return PajarracosState(
            self.rules,
            self.seed,
            self.phase,
            self.active,
            self.turn,
            self.hands,
            self.reserve,
            self.discard,
            self.orchards,
            self.shooed_out,
            self.scarecrowed,
        )

    @property
    def num_players(self) -> int:
        return self.rules.num_players
