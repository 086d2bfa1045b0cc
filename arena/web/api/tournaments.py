"""Tournaments over HTTP: organizers create and cancel; everyone follows progress and standings."""

from __future__ import annotations

from flask import jsonify, request

from arena.services import tournaments as service
from arena.services.errors import Invalid
from arena.web.api import api
from arena.web.api.common import current_account, int_arg, json_body
from arena.web.api.openapi import TOURNAMENT_CREATE
from arena.web.context import context, unit_of_work
from arena.web.ratelimit import tournament_limit


@api.post("/tournaments")
@tournament_limit
def create_tournament():  # type: ignore[no-untyped-def]
    ctx = context()
    with unit_of_work() as session:
        organizer = current_account(session)  # who asks first: no token is a 401 whatever the body
        body = json_body(TOURNAMENT_CREATE)
        tournament = service.create_tournament(session, organizer, body, ctx.settings.deal_key())
        tournament_id = tournament.id
    with unit_of_work() as session:
        service.queue_tournament(session, ctx.queue, tournament_id)
        data = service.tournament_json(session, service.get_tournament(session, tournament_id))
    return jsonify(data), 201


@api.get("/tournaments")
def list_tournaments():  # type: ignore[no-untyped-def]
    status = request.args.get("status") or None
    if status not in (None, "running", "finished", "cancelled"):
        raise Invalid("status must be running, finished or cancelled")
    limit = int_arg("limit", 50, 1, 500) or 50
    with unit_of_work() as session:
        return jsonify([service.tournament_json(session, t, detail=False)
                        for t in service.list_tournaments(session, status, limit)])


@api.get("/tournaments/<int:tournament_id>")
def show_tournament(tournament_id: int):  # type: ignore[no-untyped-def]
    with unit_of_work() as session:
        return jsonify(service.tournament_json(session, service.get_tournament(session, tournament_id)))


@api.post("/tournaments/<int:tournament_id>/cancel")
def cancel_tournament(tournament_id: int):  # type: ignore[no-untyped-def]
    with unit_of_work() as session:
        organizer = current_account(session)
        tournament = service.cancel_tournament(session, organizer, tournament_id, context().queue)
        return jsonify(service.tournament_json(session, tournament))
