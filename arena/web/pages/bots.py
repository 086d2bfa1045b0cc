"""A bot's page (ratings, history, results by seat, latency, faults, matches) and the submission form.

The URL is shown to the bot's owner only, fault excerpts too (they quote what the bot sent); the
signing secret is shown once, in the answer to a successful submission, and never again.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from flask import make_response, redirect, request, url_for
from werkzeug.wrappers import Response

from arena.services import bot_owner, bot_status, latency, page_queries, rating_history
from arena.services import bots as bot_service
from arena.services.errors import ServiceError, require_id
from arena.web.context import context, unit_of_work
from arena.web.pages import pages
from arena.web.pages.charts import rating_chart
from arena.web.pages.common import page, viewer
from arena.web.pages.forms import BotForm
from arena.web.pages.my_bots import keep_notice, take_notice
from arena.web.ratelimit import bot_limit
from referee.games import GAMES


def latency_labels(summary: dict[str, Any]) -> dict[str, Any]:
    """Bucket bounds as words: "<= 5 ms", or "> 10 s" for the open-ended last bucket; a bound above the slowest
    answer seen is that answer instead (no percentile is slower than the maximum: a bot cut at its 1 s limit read
    "p50 <= 2000 ms" beside "max 1033.8 ms")."""
    top, most = latency.BUCKETS_MS[-1], summary.get("max_ms") or 0.0
    summary["labels"] = [(q, f"≤ {most:.1f} ms" if 0 < most < v else
                          f"> {top / 1000:g} s" if v == float("inf") else f"≤ {v:g} ms")
                         for q, v in summary["percentiles"]]
    return summary


@pages.get("/bots/<int:bot_id>")
def bot_page(bot_id: int) -> tuple[str, int]:
    require_id(bot_id, "bot")
    with unit_of_work() as session:
        account = viewer(session)
        bot = bot_service.get_bot(session, bot_id)
        is_owner = account is not None and account.id == bot.owner_id
        data = {
            "bot": {"id": bot.id, "name": bot.name, "owner": bot.owner.name, "game": bot.game, "status": bot.status,
                    "version": bot.info.get("version"), "author": bot.info.get("author"),
                    "created_at": bot.created_at, "url": bot.url if is_owner else None},
            "is_owner": is_owner,
            "ratings": page_queries.bot_ratings(session, bot_id),
            "charts": [c for c in map(rating_chart, rating_history.history(session, bot_id)) if c],
            "seats": page_queries.results_by_seat(session, bot_id),
            "latency": latency_labels(page_queries.latency_summary(session, bot_id)),
            "fault_counts": page_queries.fault_counts(session, bot_id),
            "last_faults": page_queries.last_faults(session, bot_id) if is_owner else [],
            "matches": page_queries.bot_matches(session, bot_id),
        } | bot_status.page_sections(session, bot, is_owner)
    fitted = [r for r in data["ratings"] if r["elo"] is not None]
    data["headline"] = max(fitted, key=lambda r: (r["games"], -r["players"])) if fitted else None  # busiest board
    data["game_title"] = GAMES[data["bot"]["game"]].spec.title if data["bot"]["game"] in GAMES else data["bot"]["game"]
    return page("bot.html", **data)


@pages.route("/bots/new", methods=["GET", "POST"])
@bot_limit  # one budget with the API's bot submission
def new_bot() -> tuple[str, int] | Response:
    ctx = context()
    with unit_of_work(readonly=True) as session:  # the health check below runs with no transaction open
        account = viewer(session)
        if account is None:
            return redirect(url_for("pages.login", next=request.path))
        owner_id = account.id
    form = BotForm()
    error, problems, status = None, [], 200
    if request.method == "POST":
        status = 422
    if form.validate_on_submit():
        try:
            created, secret = bot_service.submit_bot(ctx.db, owner_id, form.name.data.strip(), form.url.data.strip(),
                                                     form.game.data, ctx.settings, ctx.health_check)
        except ServiceError as exc:
            error, status = exc.message, exc.status
            details = exc.details if isinstance(exc.details, dict) else {}
            problems = [str(p) for p in details.get("problems", [])]
        else:  # post/redirect/get: the secret waits in the session for the one page that shows it
            shown = {"id": created["id"], "name": created["name"], "warnings": created.get("warnings", [])[:6],
                     "joins_at": _joins_at(created)}
            keep_notice("created", "registered", bot=shown, fingerprint=bot_owner.fingerprint(secret))
            return redirect(url_for("pages.bot_created"), 303)
    return page("bot_new.html", status, form=form, error=error, problems=problems)


@pages.get("/bots/new/done")
def bot_created() -> Response:
    """The secret of the bot just submitted, once: a refresh (or the back button) finds it gone."""
    with unit_of_work() as session:
        account = viewer(session)
        notice = take_notice()
        if account is None or notice is None or notice.get("kind") != "created":
            return redirect(url_for("pages.my_bots"))
        secret = bot_owner.secret_to_show(session, notice["bot"]["id"], account, notice["fingerprint"])
    if secret is None:  # rotated meanwhile: the newer secret was shown where it was made
        return redirect(url_for("pages.my_bots"))
    response = make_response(page("bot_created.html", bot=notice["bot"], secret=secret))
    response.headers["Cache-Control"] = "no-store"
    return response


def _joins_at(created: dict[str, Any]) -> str | None:
    """When a bot waiting to be restarted with its new secret joins the ladder, for the page that shows it."""
    if created.get("paused_by") != "new_secret" or not created.get("recheck_at"):
        return None
    return datetime.fromisoformat(created["recheck_at"]).strftime("%H:%M:%S UTC")
