"""The front page: the games with the top of their leaderboards, tournaments under way, and where to start."""

from __future__ import annotations

from arena.services import page_queries
from arena.services.tournaments import TournamentStatus
from arena.web.context import unit_of_work
from arena.web.pages import pages
from arena.web.pages.common import page, viewer
from referee.games import GAMES

TOP = 5


@pages.get("/")
def home() -> tuple[str, int]:
    games = []
    with unit_of_work() as session:
        account = viewer(session)
        for name in sorted(GAMES):
            players = page_queries.busiest_board(session, name)
            entries = page_queries.top_entries(session, name, players, TOP) if players else []
            games.append({"spec": GAMES[name].spec, "players": players, "entries": entries})
        running = page_queries.recent_tournaments(session, TournamentStatus.RUNNING, 10)
        finished = page_queries.recent_tournaments(session, TournamentStatus.FINISHED, 5)
        progress = page_queries.progress_many(session, [t.id for t in running])
        my_bots = page_queries.owned_bots(session, account.id) if account else []
    return page("home.html", games=games, running=running, finished=finished, progress_by_id=progress, my_bots=my_bots)
