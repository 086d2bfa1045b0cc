"""``GET /api/games``: what can be played."""

from __future__ import annotations

from flask import jsonify

from arena.web.api import api
from referee.games import GAMES


@api.get("/games")
def list_games():  # type: ignore[no-untyped-def]
    return jsonify([GAMES[name].spec.to_json() for name in sorted(GAMES)])
