"""Registry of every game the arena can referee: ``GAMES`` maps a name to its ``Game``."""

from __future__ import annotations

from referee.errors import RulesError
from referee.games.base import Game, GameSpec
from referee.games.pajarracos import PAJARRACOS
from referee.games.piranha import PIRANHA_GAMES

GAMES: dict[str, Game] = {game.spec.name: game for game in (*PIRANHA_GAMES, PAJARRACOS)}


def get_game(name: str) -> Game:
    """The registered game called ``name``; a clear error names the known games otherwise."""
    try:
        return GAMES[name]
    except KeyError:
        raise RulesError(f"unknown game {name!r}; known games: {sorted(GAMES)}") from None


__all__ = ["GAMES", "Game", "GameSpec", "get_game"]
