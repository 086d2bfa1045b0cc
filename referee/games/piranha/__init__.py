"""Piranha Pedro, original and Korean editions."""

from __future__ import annotations

from referee.games.piranha.game import ENGINE_VERSION, PIRANHA_GAMES, PiranhaPedro

__all__ = ["ENGINE_VERSION", "PIRANHA_GAMES", "PiranhaPedro"]
