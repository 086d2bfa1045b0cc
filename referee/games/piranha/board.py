"""The river board as data: terrain, start square, marked piranha squares, Korean fish squares.

The layout is a RECONSTRUCTION kept in ``board.json`` so a verified layout can replace it without
touching the rules.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from referee.errors import RulesError

Cell = tuple[int, int]


@dataclass(frozen=True)
class Board:
    """Static terrain. Water squares are every square that is neither sand nor the palm."""

    name: str
    rows: tuple[str, ...]
    height: int
    width: int
    sand: frozenset[Cell]
    palm: Cell
    piranha_squares: tuple[Cell, ...]
    fish_squares: tuple[Cell, ...]

    def on_board(self, cell: Cell) -> bool:
        return 0 <= cell[0] < self.height and 0 <= cell[1] < self.width

    def is_dry(self, cell: Cell) -> bool:
        """Sand and the palm cost nothing to enter."""
        return cell in self.sand

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "rows": list(self.rows),
            "height": self.height,
            "width": self.width,
            "palm": list(self.palm),
            "piranha_squares": [list(c) for c in self.piranha_squares],
            "fish_squares": [list(c) for c in self.fish_squares],
        }


def board_from_json(data: Mapping[str, Any]) -> Board:
    """Build and check a board from its JSON description (rows of '.', 'S', 'P', 'F')."""
    try:
        rows = tuple(str(r) for r in data["rows"])
        height, width = len(rows), len(rows[0])
        if height < 2 or any(len(r) != width for r in rows):
            raise RulesError("board rows must all have the same length")
        sand: set[Cell] = set()
        palms: list[Cell] = []
        marked: list[Cell] = []
        for r, row in enumerate(rows):
            for c, ch in enumerate(row):
                if ch in "SP":
                    sand.add((r, c))
                if ch == "P":
                    palms.append((r, c))
                if ch == "F":
                    marked.append((r, c))
                if ch not in ".SPF":
                    raise RulesError(f"unknown board character {ch!r} at {(r, c)}")
        if len(palms) != 1:
            raise RulesError("a board needs exactly one palm square")
        fish = tuple(_cell(x) for x in data.get("fish_squares", [list(c) for c in marked]))
        board = Board(
            name=str(data.get("name", "custom")),
            rows=rows,
            height=height,
            width=width,
            sand=frozenset(sand),
            palm=palms[0],
            piranha_squares=tuple(marked),
            fish_squares=fish,
        )
    except (KeyError, TypeError, IndexError, ValueError, OverflowError) as exc:
        raise RulesError(f"malformed board description: {exc!r}") from exc
    for cell in fish:
        if not board.on_board(cell) or board.is_dry(cell):
            raise RulesError(f"fish square {list(cell)} must be a water square on the board")
    if len(set(fish)) != len(fish) or not set(marked) <= set(fish):
        raise RulesError("fish squares must be distinct and include every marked piranha square")
    return board


def _cell(value: Any) -> Cell:
    r, c = value
    return (int(r), int(c))


@cache
def default_board() -> Board:
    """The bundled (reconstructed) layout."""
    text = resources.files(__package__).joinpath("board.json").read_text(encoding="utf-8")
    return board_from_json(json.loads(text))
