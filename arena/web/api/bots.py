"""The bot registry over HTTP: submit (health-checked), list, show, change and retire."""

from __future__ import annotations

from flask import jsonify, request
from sqlalchemy.orm import Session

from arena.services import bots as service
from arena.web.api import api
from arena.web.api.common import current_account, int_arg, json_body
from arena.web.api.openapi import BOT_CREATE, BOT_UPDATE
from arena.web.context import context, unit_of_work
from arena.web.ratelimit import bot_change_limit, bot_limit
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
