"""Ladders over HTTP: everyone reads their state; organizers pause, resume and tune them."""

from __future__ import annotations

from flask import jsonify, request

from arena.services import ladders as service
from arena.web.api import api
from arena.web.api.common import current_account, json_body
from arena.web.api.openapi import LADDER_PAUSE, LADDER_TUNE
from arena.web.context import context, unit_of_work


@api.get("/ladders")
def list_ladders():  # type: ignore[no-untyped-def]
    settings = context().settings
    with unit_of_work() as session:
        return jsonify([service.ladder_json(session, ladder, settings) for ladder in service.list_ladders(session)])


@api.get("/ladders/<int:ladder_id>")
def show_ladder(ladder_id: int):  # type: ignore[no-untyped-def]
    with unit_of_work() as session:
        return jsonify(service.ladder_json(session, service.get_ladder(session, ladder_id), context().settings))


@api.post("/ladders/<int:ladder_id>/pause")
def pause_ladder(ladder_id: int):  # type: ignore[no-untyped-def]
    body = json_body(LADDER_PAUSE) if request.get_data(cache=True) else {}  # a reason is optional
    with unit_of_work() as session:
        ladder = service.pause_ladder(session, current_account(session), ladder_id, body.get("reason"))
        return jsonify(service.ladder_json(session, ladder, context().settings))


@api.post("/ladders/<int:ladder_id>/resume")
def resume_ladder(ladder_id: int):  # type: ignore[no-untyped-def]
    with unit_of_work() as session:
        ladder = service.resume_ladder(session, current_account(session), ladder_id)
        return jsonify(service.ladder_json(session, ladder, context().settings))


@api.patch("/ladders/<int:ladder_id>/settings")
def tune_ladder(ladder_id: int):  # type: ignore[no-untyped-def]
    body = json_body(LADDER_TUNE)
    with unit_of_work() as session:
        ladder = service.tune_ladder(session, current_account(session), ladder_id, body)
        return jsonify(service.ladder_json(session, ladder, context().settings))
