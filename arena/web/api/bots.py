"""The bot registry over HTTP: submit (health-checked), list, show, change and retire; and what an owner
does on the ladder: versions, pause and resume, capacity, a new secret, the bot's event log."""

from __future__ import annotations

from flask import jsonify, request
from sqlalchemy.orm import Session

from arena.services import bot_owner, bot_status, bot_versions
from arena.services import bots as service
from arena.web.api import api
from arena.web.api.common import current_account, int_arg, json_body
from arena.web.api.openapi import BOT_CAPACITY, BOT_CREATE, BOT_PAUSE, BOT_UPDATE, BOT_VERSION
from arena.web.context import context, unit_of_work
from arena.web.ratelimit import bot_change_limit, bot_check_limit, bot_limit
from referee.games import GAMES


@api.post("/bots")
@bot_limit
def submit_bot():  # type: ignore[no-untyped-def]
    ctx = context()
    with unit_of_work(readonly=True) as session:  # the health check runs with no transaction open
        owner_id = _account_id(session)  # who asks first: no token is a 401 whatever the body
    body = json_body(BOT_CREATE)
    data, secret = service.submit_bot(ctx.db, owner_id, body["name"], body["url"], body["game"], ctx.settings,
                                      ctx.health_check)
    return jsonify(data | {"secret": secret}), 201


@api.get("/bots")
def list_bots():  # type: ignore[no-untyped-def]
    limit = int_arg("limit", 100, 1, 500)
    offset = int_arg("offset", 0, 0)
    with unit_of_work() as session:
        if request.args.get("mine") in ("1", "true"):  # the owner's view: ladder state, rating, recent faults
            account = current_account(session)
            assert account is not None
            return jsonify(bot_status.owner_bots(session, account, context().settings))
        viewer = current_account(session, required=False)
        game = request.args.get("game") or None
        if game is not None and game not in GAMES:
            return jsonify([])  # no bot plays an unknown game; its name never reaches the database
        bots = service.list_bots(session, game, limit=limit or 100, offset=offset or 0)
        return jsonify([service.bot_json(bot, viewer) for bot in bots])


@api.get("/bots/<int:bot_id>")
def show_bot(bot_id: int):  # type: ignore[no-untyped-def]
    with unit_of_work() as session:
        viewer = current_account(session, required=False)
        return jsonify(bot_status.bot_detail(session, service.get_bot(session, bot_id), viewer))


@api.patch("/bots/<int:bot_id>")
@bot_change_limit
def change_bot(bot_id: int):  # type: ignore[no-untyped-def]
    ctx = context()
    with unit_of_work(readonly=True) as session:
        account_id = _account_id(session)
    body = json_body(BOT_UPDATE)
    return jsonify(service.change_bot(ctx.db, bot_id, account_id, body, ctx.settings, ctx.health_check))


def _account_id(session: Session) -> int:
    account = current_account(session)
    assert account is not None
    return account.id


@api.delete("/bots/<int:bot_id>")
def retire_bot(bot_id: int):  # type: ignore[no-untyped-def]
    with unit_of_work() as session:
        service.delete_bot(session, bot_id, current_account(session))
    return "", 204


@api.post("/bots/<int:bot_id>/retire")
def retire_bot_post(bot_id: int):  # type: ignore[no-untyped-def]
    with unit_of_work() as session:
        account = current_account(session)
        service.delete_bot(session, bot_id, account)
        return jsonify(service.bot_json(service.get_bot(session, bot_id), account))


@api.get("/bots/<int:bot_id>/versions")
def bot_versions_list(bot_id: int):  # type: ignore[no-untyped-def]
    with unit_of_work() as session:
        return jsonify(bot_status.versions_json(session, service.get_bot(session, bot_id)))


@api.post("/bots/<int:bot_id>/versions")
@bot_check_limit
def publish_version(bot_id: int):  # type: ignore[no-untyped-def]
    ctx = context()
    with unit_of_work(readonly=True) as session:  # who asks first: no body is read for a stranger
        account_id = _account_id(session)
    body = json_body(BOT_VERSION)
    data = bot_versions.publish_version(ctx.db, bot_id, account_id, body.get("url"), ctx.settings, ctx.health_check)
    return jsonify(data), 201


@api.post("/bots/<int:bot_id>/pause")
def pause_bot(bot_id: int):  # type: ignore[no-untyped-def]
    with unit_of_work() as session:
        account = current_account(session)
        body = json_body(BOT_PAUSE) if request.get_data(cache=True) else {}
        return jsonify(service.bot_json(bot_owner.pause(session, bot_id, account, body.get("reason")), account))


@api.post("/bots/<int:bot_id>/resume")
@bot_check_limit
def resume_bot(bot_id: int):  # type: ignore[no-untyped-def]
    ctx = context()
    with unit_of_work(readonly=True) as session:
        account_id = _account_id(session)
    return jsonify(bot_owner.resume(ctx.db, bot_id, account_id, ctx.settings, ctx.health_check))


@api.post("/bots/<int:bot_id>/capacity")
def set_capacity(bot_id: int):  # type: ignore[no-untyped-def]
    with unit_of_work() as session:
        account = current_account(session)
        body = json_body(BOT_CAPACITY)
        bot = bot_owner.set_capacity(session, bot_id, account, body["capacity"], context().settings)
        return jsonify(service.bot_json(bot, account))


@api.post("/bots/<int:bot_id>/secret")
def rotate_secret(bot_id: int):  # type: ignore[no-untyped-def]
    with unit_of_work() as session:
        account = current_account(session)
        bot, secret = bot_owner.rotate_secret(session, bot_id, account, context().settings)
        response = jsonify(service.bot_json(bot, account) | {"secret": secret})
    response.headers["Cache-Control"] = "no-store"
    return response


@api.get("/bots/<int:bot_id>/events")
def bot_events_list(bot_id: int):  # type: ignore[no-untyped-def]
    limit = int_arg("limit", 30, 1, 200)
    with unit_of_work() as session:
        viewer = current_account(session, required=False)
        bot = service.get_bot(session, bot_id)
        owner_view = viewer is not None and viewer.id == bot.owner_id
        return jsonify(bot_status.events_json(session, bot, owner_view, limit or 30))
