"""The index pages: every bot, match, tournament and leaderboard, filtered and paged; two bots'
head-to-head record. Thin: parse the query, call one service function, render."""

from __future__ import annotations

from flask import request

from arena.services import find_lists, find_matches
from arena.services.errors import require_id
from arena.services.ladders import list_ladders
from arena.web.context import unit_of_work
from arena.web.pages import ladder_name, pages
from arena.web.pages.common import page, viewer
from referee.games import GAMES


def game_titles() -> list[tuple[str, str]]:
    return [(name, GAMES[name].spec.title) for name in sorted(GAMES)]


@pages.get("/matches")
def matches_index() -> tuple[str, int]:
    found = find_matches.parse_filter(request.args)
    with unit_of_work(readonly=True) as session:
        viewer(session)
        data = find_matches.match_index(session, found)
        ladders = [(ladder.id, ladder_name(ladder.game, ladder.players)) for ladder in list_ladders(session)]
    return page("find_matches.html", f=found, games=game_titles(), results=list(find_matches.RESULTS.items()),
                statuses=[(s, s) for s in find_matches.STATUSES], ladders=ladders, **data)


@pages.get("/bots")
def bots_index() -> tuple[str, int]:
    found = find_lists.parse_list_filter(request.args, find_lists.BOT_STATES)
    with unit_of_work(readonly=True) as session:
        viewer(session)
        listing = find_lists.find_bots(session, found)
    return page("find_bots.html", f=found, listing=listing, games=game_titles(),
                statuses=[(s, s) for s in find_lists.BOT_STATES])


@pages.get("/tournaments")
def tournaments_index() -> tuple[str, int]:
    found = find_lists.parse_list_filter(request.args, find_lists.TOURNAMENT_STATES)
    with unit_of_work(readonly=True) as session:
        viewer(session)
        listing = find_lists.find_tournaments(session, found)
    return page("find_tournaments.html", f=found, listing=listing, games=game_titles(),
                statuses=[(s, s) for s in find_lists.TOURNAMENT_STATES])


@pages.get("/leaderboards")
def leaderboards_index() -> tuple[str, int]:
    game = request.args.get("game") or None
    with unit_of_work(readonly=True) as session:
        viewer(session)
        boards = find_lists.leaderboards(session, game)
    return page("find_leaderboards.html", boards=boards, games=game_titles(), game=game)


@pages.get("/bots/<int:bot_id>/vs/<int:opponent_id>")
def head_to_head_page(bot_id: int, opponent_id: int) -> tuple[str, int]:
    require_id(bot_id, "bot")
    require_id(opponent_id, "bot")
    with unit_of_work(readonly=True) as session:
        viewer(session)
        record = find_matches.head_to_head(session, bot_id, opponent_id)
        recent = find_matches.find_matches(session, find_matches.MatchFilter(bot=bot_id, opponent=opponent_id), 20)
    return page("head_to_head.html", record=record, recent=recent, games=game_titles())
