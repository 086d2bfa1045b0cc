"""Moving Pedro one square at a time, with stone costs and the three ways to fall."""

from __future__ import annotations

from dataclasses import dataclass

from referee.games.piranha.board import Board, Cell
from referee.games.piranha.cards import arrows, delta

EDGE = "edge"  # sent over the edge of the board
PIRANHA = "piranha"  # sent onto (or across) a piranha
NO_STONES = "no_stones"  # had to lay a stone with none left
FALL_CAUSES = (EDGE, PIRANHA, NO_STONES)


@dataclass(frozen=True, slots=True)
class Move:
    """What one revealed card did."""

    pedro: Cell  # where Pedro stands afterwards: the last square he safely entered
    laid: tuple[Cell, ...]  # squares that got one of the mover's stones, in order
    fall: str | None  # one of FALL_CAUSES, or None for a safe move
    path: tuple[Cell, ...]  # squares safely entered, in order


def move_pedro(
    board: Board, pedro: Cell, card: str, board_stones: frozenset[Cell], piranhas: frozenset[Cell], stones: int
) -> Move:
    """Walk ``card``'s arrows one step at a time.

    Each step: off the board -> fall; a piranha there -> fall; sand, palm or a laid stone -> free;
    empty water (a marked square without its piranha included) -> lay one of the mover's stones first,
    or fall if he has none. Stones laid before a fall stay on the board.
    """
    dr, dc = delta(card)
    r, c = pedro
    laid: list[Cell] = []
    path: list[Cell] = []
    for _ in range(arrows(card)):
        nxt = (r + dr, c + dc)
        if not board.on_board(nxt):
            return Move((r, c), tuple(laid), EDGE, tuple(path))
        if nxt in piranhas:
            return Move((r, c), tuple(laid), PIRANHA, tuple(path))
        if not board.is_dry(nxt) and nxt not in board_stones:
            if stones == 0:
                return Move((r, c), tuple(laid), NO_STONES, tuple(path))
            stones -= 1
            laid.append(nxt)
        r, c = nxt
        path.append(nxt)
    return Move((r, c), tuple(laid), None, tuple(path))
