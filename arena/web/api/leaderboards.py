"""``GET /api/leaderboards/<game>?players=k``: the stored Arena Elo table with 95% intervals."""

from __future__ import annotations

from flask import jsonify

from arena.services.leaderboards import leaderboard
from arena.web.api import api
from arena.web.api.common import int_arg
from arena.web.context import unit_of_work


@api.get("/leaderboards/<game>")
def show_leaderboard(game: str):  # type: ignore[no-untyped-def]
    players = int_arg("players", None, 2, 6)
    with unit_of_work() as session:
        return jsonify(leaderboard(session, game, players))
