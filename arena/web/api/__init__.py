"""The REST API under ``/api``: JSON in, JSON out, every error a JSON object with a clear message."""

from __future__ import annotations

from flask import Blueprint

api = Blueprint("api", __name__)

from arena.web.api import (  # noqa: E402,F401 - routes register themselves on the blueprint
    accounts,
    bots,
    errors,
    find,
    games,
    ladders,
    leaderboards,
    matches,
    openapi,
    tournaments,
)
