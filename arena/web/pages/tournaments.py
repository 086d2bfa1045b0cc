"""A tournament's page (progress that updates itself, standings, cross-table, matches) and the
organizers' form to start one."""

from __future__ import annotations

from typing import Any

from flask import redirect, request, url_for
from werkzeug.wrappers import Response

from arena.services import page_queries
from arena.services import tournaments as service
from arena.services.errors import ServiceError, require_id
from arena.services.tournaments import TournamentStatus
from arena.web.context import context, unit_of_work
from arena.web.live import live_seq
from arena.web.pages import pages
from arena.web.pages.common import page, viewer
from arena.web.pages.errors import error_page
from arena.web.pages.forms import TournamentForm
from arena.web.ratelimit import tournament_limit
from referee.games import GAMES

MATCHES_PER_PAGE = 50
CROSS_TABLE_MAX = 24  # bots; a bigger table would not be readable on a page


@pages.get("/tournaments/<int:tournament_id>")
def tournament_page(tournament_id: int) -> tuple[str, int]:
    require_id(tournament_id, "tournament")
    page_number = min(max(1, request.args.get("page", 1, type=int) or 1), 100_000)
    live_seq(f"tournament-{tournament_id}")  # before the database: an event after it is newer than the page
    with unit_of_work() as session:
        viewer(session)
        tournament = service.get_tournament(session, tournament_id)
        data = service.tournament_json(session, tournament)
        matches = page_queries.tournament_matches(session, tournament_id, MATCHES_PER_PAGE,
                                                  (page_number - 1) * MATCHES_PER_PAGE)
    total = data["progress"]["total"]
    names = {s["bot_id"]: s["name"] for s in data["standings"]}
    spec = GAMES[data["game"]].spec if data["game"] in GAMES else None
    show_cross = len(data["bots"]) <= CROSS_TABLE_MAX
    return page("tournament.html", t=data, spec=spec, matches=matches, names=names, page_number=page_number,
                pages=max(1, -(-total // MATCHES_PER_PAGE)), show_cross=show_cross,
                cross=cross_rows(data) if show_cross else [], running=data["status"] == TournamentStatus.RUNNING)


def cross_rows(data: dict[str, Any]) -> list[tuple[dict[str, Any], list[dict[str, int] | None]]]:
    """The cross-table in standings order, one row per bot (None on the diagonal)."""
    order = [str(s["bot_id"]) for s in data["standings"]]
    table = data["cross_table"]
    return [(s, [None if a == b else table[a][b] for b in order])
            for s, a in zip(data["standings"], order, strict=True)]


@pages.post("/tournaments/<int:tournament_id>/cancel")
def cancel_tournament(tournament_id: int) -> tuple[str, int] | Response:
    """The page's Cancel button (organizers only; the API had the only way): the matches not started are
    cancelled, the ones played stay; the page then shows the tournament as it ended."""
    require_id(tournament_id, "tournament")
    with unit_of_work() as session:
        account = viewer(session)
        if account is None:
            return redirect(url_for("pages.login", next=url_for("pages.tournament_page", tournament_id=tournament_id)),
                            303)
        service.cancel_tournament(session, account, tournament_id, context().queue)
    return redirect(url_for("pages.tournament_page", tournament_id=tournament_id), 303)


@pages.route("/tournaments/new", methods=["GET", "POST"])
@tournament_limit  # one budget with the API's tournament creation
def new_tournament() -> tuple[str, int] | Response:
    with unit_of_work() as session:
        account = viewer(session)
        if account is None:
            return redirect(url_for("pages.login", next=request.path))
        if not account.is_admin:
            return error_page(403, "Only organizers may start tournaments. Ask an organizer for an organizer token.")
        bots = page_queries.active_bots(session)
    form = TournamentForm(bots=bots)
    error, status = None, 422 if request.method == "POST" else 200
    if form.validate_on_submit():
        ctx = context()
        try:
            with unit_of_work() as session:
                organizer = viewer(session)
                assert organizer is not None
                tournament_id = service.create_tournament(session, organizer, form.body(), ctx.settings.deal_key()).id
        except ServiceError as exc:
            error, status = exc.message, exc.status
        else:
            with unit_of_work() as session:  # after the commit, so a worker finds every match it is handed
                service.queue_tournament(session, ctx.queue, tournament_id)
            return redirect(url_for("pages.tournament_page", tournament_id=tournament_id))
    return page("tournament_new.html", status, form=form, error=error, queue=context().queue is not None)
