"""The "My bots" page: every bot of the signed-in account and everything the API lets its owner do
(move the URL, publish a version, pause, resume, capacity, a new secret, retire).

Every form posts, then redirects (303) back to the page (post/redirect/get: a refresh never resubmits).
What the next page must say is kept in the session for one request (``shown_once``). A new secret
never goes into the cookie: only its fingerprint does, and the page that shows it once reads it from
the database, if it is still the bot's secret."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import make_response, redirect, request, session, url_for
from werkzeug.wrappers import Response

from arena.services import bot_owner, bot_status, bot_versions
from arena.services import bots as bot_service
from arena.services.errors import Invalid, ServiceError
from arena.web.context import context, unit_of_work
from arena.web.pages import pages
from arena.web.pages.common import page, viewer
from arena.web.ratelimit import bot_check_limit

NOTICE = "shown_once"


def keep_notice(kind: str, text: str, **extra: Any) -> None:
    """Something the next page shows once (a result, an error with its problems, a secret)."""
    session[NOTICE] = {"kind": kind, "text": text, **extra}


def take_notice() -> dict[str, Any] | None:
    return session.pop(NOTICE, None)


def _problems(exc: ServiceError) -> list[str]:
    details = exc.details if isinstance(exc.details, dict) else {}
    return [str(p) for p in details.get("problems", [])]


def _back(bot_id: int | None = None) -> Response:
    anchor = f"#bot-{bot_id}" if bot_id else ""
    return redirect(url_for("pages.my_bots") + anchor, 303)


def _signed_in() -> int | None:
    with unit_of_work(readonly=True) as db_session:
        account = viewer(db_session)
        return account.id if account is not None else None


@pages.get("/me/bots")
def my_bots() -> Response:
    with unit_of_work() as db_session:
        account = viewer(db_session)
        if account is None:
            return redirect(url_for("pages.login", next=request.path))
        bots = bot_status.owner_bots(db_session, account, context().settings)
        notice = take_notice()
        if notice is not None and notice.get("kind") == "secret":
            notice["secret"] = bot_owner.secret_to_show(db_session, notice["bot_id"], account,
                                                        notice.pop("fingerprint", ""))
    response = make_response(page("my_bots.html", bots=bots, notice=notice))
    response.headers["Cache-Control"] = "no-store"  # a secret shown once must not sit in a cache
    return response


def _act(bot_id: int, done: str, action: Callable[[int], Any]) -> Response:
    """Run ``action(account_id)`` for the signed-in owner, keep what happened for the page, go back."""
    account_id = _signed_in()
    if account_id is None:
        return redirect(url_for("pages.login", next=url_for("pages.my_bots")), 303)
    try:
        result = action(account_id)
    except ServiceError as exc:
        keep_notice("error", exc.message, problems=_problems(exc), bot_id=bot_id)
        return _back(bot_id)
    if isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], str):  # (name, secret)
        keep_notice("secret", done, bot_id=bot_id, bot_name=result[0], fingerprint=bot_owner.fingerprint(result[1]))
    else:
        extra = {"problems": list(result.get("warnings", []))} if isinstance(result, dict) else {}
        keep_notice("success", done, bot_id=result["id"] if isinstance(result, dict) else bot_id, **extra)
        if isinstance(result, dict):
            return _back(result["id"])
    return _back(bot_id)


def _field(name: str) -> str:
    return (request.form.get(name) or "").strip()


@pages.post("/me/bots/<int:bot_id>/url")
@bot_check_limit
def move_bot(bot_id: int) -> Response:
    ctx, url = context(), _field("url")
    return _act(bot_id, "The bot moved to its new URL: same version, same leaderboard entry.",
                lambda account_id: bot_service.change_bot(ctx.db, bot_id, account_id, {"url": url}, ctx.settings,
                                                          ctx.health_check))


@pages.post("/me/bots/<int:bot_id>/name")
def rename_bot(bot_id: int) -> Response:
    ctx, name = context(), _field("name")
    return _act(bot_id, "Renamed.", lambda account_id: bot_service.change_bot(ctx.db, bot_id, account_id,
                                                                              {"name": name}, ctx.settings,
                                                                              ctx.health_check))


@pages.post("/me/bots/<int:bot_id>/version")
@bot_check_limit
def publish_version(bot_id: int) -> Response:
    ctx, url = context(), _field("url")
    return _act(bot_id, "New version published: it starts on the ladder as a new, provisional entry; the "
                        "version it replaces is retired and keeps its page and last rating.",
                lambda account_id: bot_versions.publish_version(ctx.db, bot_id, account_id, url or None,
                                                                ctx.settings, ctx.health_check))


def _in_unit(bot_id: int, change: Callable[[Any, Any], Any]) -> Callable[[int], Any]:
    def run(account_id: int) -> Any:
        with unit_of_work() as db_session:
            account = viewer(db_session)
            if account is None or account.id != account_id:
                raise Invalid("sign in again")
            return change(db_session, account)
    return run


@pages.post("/me/bots/<int:bot_id>/pause")
def pause_bot(bot_id: int) -> Response:
    reason = _field("reason") or None
    return _act(bot_id, "Paused: it plays no new ladder match until you resume it.",
                _in_unit(bot_id, lambda s, a: bot_owner.pause(s, bot_id, a, reason) and None))


@pages.post("/me/bots/<int:bot_id>/resume")
@bot_check_limit
def resume_bot(bot_id: int) -> Response:
    ctx = context()
    return _act(bot_id, "Resumed: it is on the ladder.",
                lambda account_id: bot_owner.resume(ctx.db, bot_id, account_id, ctx.settings, ctx.health_check))


@pages.post("/me/bots/<int:bot_id>/capacity")
def set_capacity(bot_id: int) -> Response:
    raw = _field("capacity")
    capacity: Any = int(raw) if raw.isdigit() else raw
    return _act(bot_id, "Capacity saved.", _in_unit(
        bot_id, lambda s, a: bot_owner.set_capacity(s, bot_id, a, capacity, context().settings) and None))


@pages.post("/me/bots/<int:bot_id>/secret")
def rotate_secret(bot_id: int) -> Response:
    def rotate(s: Any, a: Any) -> tuple[str, str]:
        bot, secret = bot_owner.rotate_secret(s, bot_id, a, context().settings)
        return bot.name, secret
    return _act(bot_id, "New signing secret", _in_unit(bot_id, rotate))


@pages.post("/me/bots/<int:bot_id>/retire")
def retire_bot(bot_id: int) -> Response:
    return _act(bot_id, "Retired: it plays no more ladder matches and keeps its page, matches and last rating.",
                _in_unit(bot_id, lambda s, a: bot_service.delete_bot(s, bot_id, a)))
