"""The bot registry over HTTP: submit (health-checked), list, show, change and retire."""

from __future__ import annotations

from flask import jsonify, request

from arena.services import bots as service
from arena.web.api import api
from arena.web.api.common import context, current_account, int_arg, json_body, unit_of_work
from arena.web.api.openapi import BOT_CREATE, BOT_UPDATE
from arena.web.ratelimit import bot_limit
from referee.games import GAMES


@api.post("/bots")
@bot_limit
def submit_bot():  # type: ignore[no-untyped-def]
    body = json_body(BOT_CREATE)
    ctx = context()
    with unit_of_work() as session:
        owner = current_account(session)
        bot, secret = service.register_bot(session, owner, body["name"], body["url"], body["game"], ctx.settings,
                                           ctx.health_check)
        data = service.bot_json(bot, owner) | {"secret": secret}
    return jsonify(data), 201


@api.get("/bots")
def list_bots():  # type: ignore[no-untyped-def]
    limit = int_arg("limit", 100, 1, 500)
    offset = int_arg("offset", 0, 0)
    with unit_of_work() as session:
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
        return jsonify(service.bot_json(service.get_bot(session, bot_id), viewer))


@api.patch("/bots/<int:bot_id>")
def change_bot(bot_id: int):  # type: ignore[no-untyped-def]
    body = json_body(BOT_UPDATE)
    ctx = context()
    with unit_of_work() as session:
        account = current_account(session)
        bot = service.update_bot(session, bot_id, account, body, ctx.settings, ctx.health_check)
        return jsonify(service.bot_json(bot, account))


@api.delete("/bots/<int:bot_id>")
def retire_bot(bot_id: int):  # type: ignore[no-untyped-def]
    with unit_of_work() as session:
        service.delete_bot(session, bot_id, current_account(session))
    return "", 204
