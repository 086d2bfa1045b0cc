"""``/leaderboards/<game>``: the stored Arena Elo table of one game and player count (never refitted here)."""

from __future__ import annotations

from flask import request

from arena.services.errors import Invalid
from arena.services.leaderboards import leaderboard
from arena.web.context import unit_of_work
from arena.web.live import live_seq
from arena.web.pages import pages
from arena.web.pages.charts import interval_bar, interval_scale
from arena.web.pages.common import page, viewer
from referee.games import GAMES


def players_arg() -> int | None:
    raw = request.args.get("players", "")
    if not raw:
        return None
    if not raw.isdigit():
        raise Invalid("players must be a whole number")
    return int(raw)


@pages.get("/leaderboards/<game>")
def leaderboard_page(game: str) -> tuple[str, int]:
    players = players_arg()
    if players is not None:  # before the database (else the board's default player count is known after it)
        live_seq(f"leaderboard-{game}-{players}")
    with unit_of_work() as session:
        viewer(session)
        board = leaderboard(session, game, players)
    spec = GAMES[game].spec
    scale = interval_scale(board["entries"])
    bars = [interval_bar(scale, e["elo_low"], e["elo"], e["elo_high"]) for e in board["entries"]]
    return page("leaderboard.html", board=board, spec=spec, bars=bars,
                choices=sorted(set(board["available_players"]) | {board["players"]}))
