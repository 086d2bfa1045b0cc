"""Matches over HTTP: newest first, with the match list page's filters and cursor; one match with its replay."""

from __future__ import annotations

from flask import jsonify, request

from arena.services import match_queries as service
from arena.services.find_matches import parse_filter
from arena.web.api import api
from arena.web.api.common import int_arg
from arena.web.context import unit_of_work


@api.get("/matches")
def list_matches():  # type: ignore[no-untyped-def]
    found = parse_filter(request.args)
    limit = int_arg("limit", 50, 1, 500) or 50
    with unit_of_work() as session:
        return jsonify(service.list_matches(session, found, limit))


@api.get("/matches/<int:match_id>")
def show_match(match_id: int):  # type: ignore[no-untyped-def]
    with unit_of_work() as session:
        return jsonify(service.match_json(service.get_match(session, match_id), with_replay=True))
