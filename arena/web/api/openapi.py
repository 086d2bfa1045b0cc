"""The OpenAPI 3.1 description of ``/api``, served at ``/api/openapi.json``. Request schemas here are
the same objects the views validate bodies with, so the document cannot drift from the code."""

from __future__ import annotations

from typing import Any

from flask import jsonify

from arena.services import tournaments as limits
from arena.services.errors import MAX_ID
from arena.services.find_matches import RESULTS, STATUSES
from arena.services.ladders import REASON_CHARS, TUNABLE
from arena.web.api import api


def _int_range(bounds: tuple[int, int]) -> dict[str, Any]:
    return {"type": "integer", "minimum": bounds[0], "maximum": bounds[1]}


NAME = {"type": "string", "minLength": 1, "maxLength": 80}

ACCOUNT_CREATE = {
    "type": "object", "additionalProperties": False, "required": ["name"],
    "properties": {"name": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_.-]{1,39}$"}},
}
BOT_CREATE = {
    "type": "object", "additionalProperties": False, "required": ["name", "url", "game"],
    "properties": {"name": NAME, "url": {"type": "string", "minLength": 1, "maxLength": 2000},
                   "game": {"type": "string", "minLength": 1, "maxLength": 60}},
}
BOT_UPDATE = {
    "type": "object", "additionalProperties": False, "minProperties": 1,
    "properties": {"name": NAME, "url": {"type": "string", "minLength": 1, "maxLength": 2000},
                   "status": {"enum": ["active", "disabled"]}},
}
BOT_VERSION = {
    "type": "object", "additionalProperties": False,
    "properties": {"url": {"type": "string", "minLength": 1, "maxLength": 2000,
                           "description": "the new version's URL; leave it out to declare the same URL new"}},
}
BOT_PAUSE = {"type": "object", "additionalProperties": False,
             "properties": {"reason": {"type": "string", "maxLength": 200}}}
BOT_CAPACITY = {"type": "object", "additionalProperties": False, "required": ["capacity"],
                "properties": {"capacity": {"type": "integer", "minimum": 1, "maximum": 64,
                                            "description": "at most ARENA_LADDER_MAX_CAPACITY"}}}
TOURNAMENT_CREATE = {
    "type": "object", "additionalProperties": False, "required": ["game", "bots"],
    "properties": {
        "game": {"type": "string", "minLength": 1, "maxLength": 60},
        "bots": {"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": MAX_ID}, "minItems": 2,
                 "maxItems": limits.MAX_BOTS, "uniqueItems": True},
        "seats": _int_range(limits.SEATS),
        "cycles": _int_range(limits.CYCLES),
        "time_limit_ms": _int_range(limits.TIME_LIMIT_MS),
        "seed": _int_range(limits.SEED),
        "deals": {"type": "string", "enum": ["duplicate", "independent"]},
        "params": {"type": "object"},
    },
}

ERROR = {"type": "object", "required": ["error", "status"],
         "properties": {"error": {"type": "string"}, "status": {"type": "integer"}, "details": {}}}
BOT = {
    "type": "object", "required": ["id", "name", "owner", "game", "status", "created_at"],
    "properties": {"id": {"type": "integer"}, "name": {"type": "string"}, "owner": {"type": "string"},
                   "game": {"type": "string"}, "status": {"type": "string"}, "version": {"type": ["string", "null"]},
                   "author": {"type": ["string", "null"]}, "created_at": {"type": "string"},
                   "url": {"type": "string"}, "secret": {"type": "string"},
                   "version_number": {"type": "integer", "description": "1 for the first version of a bot"},
                   "lineage_id": {"type": "integer", "description": "the first version's id"},
                   "retired_at": {"type": ["string", "null"]},
                   "paused_by": {"enum": ["owner", "probation", "new_secret", None]},
                   "paused_reason": {"type": ["string", "null"]}, "recheck_at": {"type": ["string", "null"]},
                   "capacity": {"type": "integer"},
                   "ladder": {"type": "object", "properties": {
                       "state": {"enum": ["placing", "active", "paused", "retired"]}, "reason": {"type": "string"}}},
                   "rating": {"type": ["object", "null"]},
                   "versions": {"type": "array", "items": {"type": "object"}},
                   "warnings": {"type": "array", "items": {"type": "string"},
                                "description": "at submission: what the health check found that costs the bot time "
                                               "or safety but no fault, with fixes (as arena check prints)"}},
}
PROGRESS = {"type": "object", "required": ["done", "total"],
            "properties": {k: {"type": "integer"} for k in
                           ("done", "total", "running", "sealed", "queued", "cancelled", "errors")}}
TOURNAMENT = {
    "type": "object", "required": ["id", "game", "seats", "status", "progress"],
    "properties": {"id": {"type": "integer"}, "game": {"type": "string"}, "seats": {"type": "integer"},
                   "cycles": {"type": "integer"}, "time_limit_ms": {"type": "integer"},
                   "seed": {"type": ["integer", "null"], "description": "null while the tournament runs"},
                   "deals": {"type": "string", "enum": ["duplicate", "independent"]},
                   "params": {"type": "object"}, "bots": {"type": "array", "items": {"type": "integer"}},
                   "status": {"type": "string"}, "created_at": {"type": "string"},
                   "finished_at": {"type": ["string", "null"]}, "progress": PROGRESS,
                   "standings": {"type": "array", "items": {"type": "object"}},
                   "cross_table": {"type": "object"}},
}
MATCH = {
    "type": "object", "required": ["id", "game", "players", "status", "seats"],
    "properties": {"id": {"type": "integer"}, "tournament": {"type": ["integer", "null"]},
                   "ladder": {"type": ["integer", "null"], "description": "the ladder that chose this match"},
                   "kind": {"type": "string", "enum": ["tournament", "ladder", "single"]},
                   "game": {"type": "string"}, "players": {"type": "integer"},
                   "seed": {"type": ["integer", "null"], "description": "null until every match of the deal is over"},
                   "status": {"type": "string", "enum": ["scheduled", "queued", "running", "sealed", "finished", "void",
                                                         "cancelled", "error"]},
                   "result": {"type": ["object", "null"]},
                   "seats": {"type": "array", "items": {"type": "object"}},
                   "created_at": {"type": "string"}, "finished_at": {"type": ["string", "null"]},
                   "replay": {"type": ["object", "null"]}, "error": {"type": ["string", "null"]}},
}
LADDER_STATE = {
    "type": "object", "required": ["id", "game", "players", "status"],
    "properties": {"id": {"type": "integer"}, "game": {"type": "string"}, "players": {"type": "integer"},
                   "status": {"type": "string", "enum": ["running", "paused"]},
                   "paused_reason": {"type": ["string", "null"]}, "tables": {"type": "integer"},
                   "settled": {"type": "boolean", "description": "every rank resolved as far as the data allow: "
                                                                 "the ladder plays at its maintenance rate"},
                   "settled_at": {"type": ["string", "null"]}, "last_scheduled_at": {"type": ["string", "null"]},
                   "matches_per_hour": {"type": "integer", "description": "ladder matches finished in the last hour"},
                   "rated": {"type": "integer"}, "provisional": {"type": "integer"},
                   "bots": {"type": "integer", "description": "active bots of the game, not paused"},
                   "waiting": {"type": "boolean", "description": "fewer bots than a table needs: no match to play"},
                   "refitted_at": {"type": ["string", "null"]}},
}
LADDER = {
    "type": "object", "required": [*LADDER_STATE["required"], "settings"],
    "properties": {**LADDER_STATE["properties"],
                   "settings": {"type": "object", "description": "in effect: the arena's defaults with overrides"},
                   "overrides": {"type": "object"},
                   "matches": {"type": "object", "description": "the ladder's matches by status"}},
}
LADDER_PAUSE = {"type": "object", "additionalProperties": False,
                "properties": {"reason": {"type": "string", "maxLength": REASON_CHARS}}}
LADDER_TUNE = {
    "type": "object", "additionalProperties": False, "minProperties": 1,
    "properties": {name: {"type": "integer" if name == "time_limit_ms" else ["integer", "null"],
                          "minimum": low, "maximum": high} for name, (low, high) in TUNABLE.items()},
}
LEADERBOARD = {
    "type": "object", "required": ["game", "players", "entries"],
    "properties": {"game": {"type": "string"}, "players": {"type": "integer"},
                   "available_players": {"type": "array", "items": {"type": "integer"}},
                   "entries": {"type": "array", "items": {
                       "type": "object",
                       "required": ["rank", "bot_id", "name", "elo", "elo_low", "elo_high", "games"],
                       "properties": {"rank": {"type": "integer"}, "rank_low": {"type": "integer"},
                                      "rank_high": {"type": "integer"}, "bot_id": {"type": "integer"},
                                      "name": {"type": "string"}, "owner": {"type": "string"},
                                      "elo": {"type": "number"}, "elo_low": {"type": "number"},
                                      "elo_high": {"type": "number"}, "games": {"type": "integer"},
                                      "live_elo": {"type": "number"}, "los_next": {"type": ["number", "null"]},
                                      "fault_rate": {"type": ["number", "null"]}}}},
                   "ladder": {"oneOf": [LADDER_STATE, {"type": "null"}],
                              "description": "this leaderboard's ladder, if it has one"}},
}


_RECORD = {"type": "object", "required": ["matches", "wins", "draws", "losses"],
           "properties": {k: {"type": "integer"} for k in ("matches", "wins", "draws", "losses")}}
HEAD_TO_HEAD = {"type": "object", "required": ["bot", "opponent", "boards", "total", "score"],
                "properties": {"bot": {"type": "object"}, "opponent": {"type": "object"}, "total": _RECORD,
                               "boards": {"type": "array", "items": {"type": "object"}},
                               "score": {"type": ["number", "null"]}}}


def _json(schema: dict[str, Any]) -> dict[str, Any]:
    return {"content": {"application/json": {"schema": schema}}}


def _errors(*codes: int) -> dict[str, Any]:
    return {str(code): {"description": "error", **_json({"$ref": "#/components/schemas/Error"})} for code in codes}


def _op(summary: str, ok: int, schema: dict[str, Any] | None, *codes: int, body: str | None = None,
        auth: bool = False, params: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    op: dict[str, Any] = {"summary": summary, "responses": {
        str(ok): {"description": "ok", **(_json(schema) if schema is not None else {})}, **_errors(*codes)}}
    if body:
        op["requestBody"] = {"required": True, **_json({"$ref": f"#/components/schemas/{body}"})}
    if auth:
        op["security"] = [{"bearer": []}]
    if params:
        op["parameters"] = params
    return op


def _path_id(name: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": {"type": "integer", "minimum": 1,
                                                                      "maximum": MAX_ID}}


def _query(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "schema": schema}


def spec() -> dict[str, Any]:
    limit = _query("limit", {"type": "integer", "minimum": 1, "maximum": 500})
    return {
        "openapi": "3.1.0",
        "info": {"title": "Bot arena API", "version": "1.0.0",
                 "description": "Accounts, bots, tournaments, ladders, matches, leaderboards. See docs/api.md."},
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {"Error": ERROR, "AccountCreate": ACCOUNT_CREATE, "BotCreate": BOT_CREATE,
                        "BotUpdate": BOT_UPDATE, "BotVersion": BOT_VERSION, "BotPause": BOT_PAUSE,
                        "BotCapacity": BOT_CAPACITY, "TournamentCreate": TOURNAMENT_CREATE, "Bot": BOT,
                        "Tournament": TOURNAMENT, "Match": MATCH, "Leaderboard": LEADERBOARD, "Ladder": LADDER,
                        "LadderPause": LADDER_PAUSE, "LadderTune": LADDER_TUNE},
        },
        "paths": {
            "/api/games": {"get": _op("registered games", 200, {"type": "array", "items": {"type": "object"}})},
            "/api/accounts": {"post": _op(
                "sign up; answers the API token once", 201,
                {"type": "object", "required": ["id", "name", "token"],
                 "properties": {"id": {"type": "integer"}, "name": {"type": "string"}, "token": {"type": "string"},
                                "is_admin": {"type": "boolean"}}},
                400, 403, 409, 413, 422, 429, body="AccountCreate")},
            "/api/bots": {
                "get": _op("list bots (mine=1: the caller's own, with ladder state and recent faults)", 200,
                           {"type": "array", "items": {"$ref": "#/components/schemas/Bot"}}, 401, 422,
                           params=[_query("game", {"type": "string"}), limit,
                                   _query("mine", {"enum": ["1", "true"]}),
                                   _query("offset", {"type": "integer", "minimum": 0, "maximum": 10**9})]),
                "post": _op("submit a bot; health-checked; answers its signing secret once", 201,
                            {"$ref": "#/components/schemas/Bot"}, 400, 401, 409, 413, 422, 429, body="BotCreate",
                            auth=True),
            },
            "/api/bots/{bot_id}": {
                "get": _op("one bot", 200, {"$ref": "#/components/schemas/Bot"}, 404, params=[_path_id("bot_id")]),
                "patch": _op("change a bot (owner only); a new URL is health-checked", 200,
                             {"$ref": "#/components/schemas/Bot"}, 400, 401, 403, 404, 409, 413, 422, 429,
                             body="BotUpdate", auth=True,
                             params=[_path_id("bot_id")]),
                "delete": _op("retire a bot (owner only)", 204, None, 401, 403, 404, auth=True,
                              params=[_path_id("bot_id")]),
            },
            "/api/bots/{bot_id}/versions": {
                "get": _op("every version of the bot, oldest first", 200,
                           {"type": "array", "items": {"type": "object"}}, 404, params=[_path_id("bot_id")]),
                "post": _op("publish a new version (owner): a new leaderboard entry, provisional; the old one is "
                            "retired", 201, {"$ref": "#/components/schemas/Bot"}, 400, 401, 403, 404, 409, 413, 422,
                            429, body="BotVersion", auth=True, params=[_path_id("bot_id")]),
            },
            "/api/bots/{bot_id}/pause": {"post": _op(
                "take the bot off the ladder until you resume it (owner)", 200, {"$ref": "#/components/schemas/Bot"},
                400, 401, 403, 404, 409, 413, 422, body="BotPause", auth=True, params=[_path_id("bot_id")])},
            "/api/bots/{bot_id}/resume": {"post": _op(
                "back on the ladder (owner); a bot on probation, or waiting to be restarted with its new secret, "
                "is health-checked first", 200,
                {"$ref": "#/components/schemas/Bot"}, 401, 403, 404, 409, 422, 429, auth=True,
                params=[_path_id("bot_id")])},
            "/api/bots/{bot_id}/capacity": {"post": _op(
                "how many ladder matches the bot may play at once (owner)", 200, {"$ref": "#/components/schemas/Bot"},
                400, 401, 403, 404, 409, 413, 422, body="BotCapacity", auth=True, params=[_path_id("bot_id")])},
            "/api/bots/{bot_id}/secret": {"post": _op(
                "a new signing secret, answered once (owner); a bot on the ladder leaves it until it is "
                "restarted with it (ARENA_LADDER_NEW_SECRET_S, or resume)", 200, {"$ref": "#/components/schemas/Bot"},
                401, 403, 404, 409, auth=True, params=[_path_id("bot_id")])},
            "/api/bots/{bot_id}/retire": {"post": _op(
                "retire the bot from the ladder for good (owner); same as DELETE", 200,
                {"$ref": "#/components/schemas/Bot"}, 401, 403, 404, auth=True, params=[_path_id("bot_id")])},
            "/api/bots/{bot_id}/events": {"get": _op(
                "the bot's log: URL moves, pauses, probation, versions (URLs only to the owner)", 200,
                {"type": "array", "items": {"type": "object"}}, 404, 422, params=[_path_id("bot_id"), limit])},
            "/api/tournaments": {
                "get": _op("list tournaments", 200,
                           {"type": "array", "items": {"$ref": "#/components/schemas/Tournament"}}, 422,
                           params=[_query("status", {"enum": ["running", "finished", "cancelled"]}), limit]),
                "post": _op("create a round robin (organizers)", 201, {"$ref": "#/components/schemas/Tournament"},
                            400, 401, 403, 413, 422, 429, body="TournamentCreate", auth=True),
            },
            "/api/tournaments/{tournament_id}": {"get": _op(
                "status, progress, standings, cross-table", 200, {"$ref": "#/components/schemas/Tournament"}, 404,
                params=[_path_id("tournament_id")])},
            "/api/tournaments/{tournament_id}/cancel": {"post": _op(
                "cancel (organizers)", 200, {"$ref": "#/components/schemas/Tournament"}, 401, 403, 404, auth=True,
                params=[_path_id("tournament_id")])},
            "/api/bots/{bot_id}/vs/{opponent_id}": {"get": _op(
                "head to head over every finished match both bots sat in", 200, HEAD_TO_HEAD, 404, 422,
                params=[_path_id("bot_id"), _path_id("opponent_id")])},
            "/api/matches": {"get": _op(
                "matches, newest first (before the cursor ``before``); ``result`` is the bot's and needs ``bot``",
                200, {"type": "array", "items": {"$ref": "#/components/schemas/Match"}}, 404, 422,
                params=[*(_query(name, {"type": "integer", "minimum": 1, "maximum": MAX_ID})
                          for name in ("tournament", "ladder", "bot", "opponent", "before")),
                        _query("game", {"type": "string"}), _query("players", _int_range(limits.SEATS)),
                        _query("result", {"enum": list(RESULTS)}), _query("status", {"enum": list(STATUSES)}),
                        limit])},
            "/api/matches/{match_id}": {"get": _op(
                "result and replay", 200, {"$ref": "#/components/schemas/Match"}, 404, params=[_path_id("match_id")])},
            "/api/ladders": {"get": _op(
                "every ladder (one per game and player count) with its state", 200,
                {"type": "array", "items": {"$ref": "#/components/schemas/Ladder"}})},
            "/api/ladders/{ladder_id}": {"get": _op(
                "one ladder", 200, {"$ref": "#/components/schemas/Ladder"}, 404, params=[_path_id("ladder_id")])},
            "/api/ladders/{ladder_id}/pause": {"post": _op(
                "schedule no new table (organizers); owed rotations are still played", 200,
                {"$ref": "#/components/schemas/Ladder"}, 400, 401, 403, 404, 413, 422, body="LadderPause", auth=True,
                params=[_path_id("ladder_id")])},
            "/api/ladders/{ladder_id}/resume": {"post": _op(
                "schedule again (organizers)", 200, {"$ref": "#/components/schemas/Ladder"}, 401, 403, 404, auth=True,
                params=[_path_id("ladder_id")])},
            "/api/ladders/{ladder_id}/settings": {"patch": _op(
                "tune a ladder (organizers): an integer sets, null restores the arena's default", 200,
                {"$ref": "#/components/schemas/Ladder"}, 400, 401, 403, 404, 413, 422, body="LadderTune", auth=True,
                params=[_path_id("ladder_id")])},
            "/api/leaderboards/{game}": {"get": _op(
                "Elo with 95% intervals", 200, {"$ref": "#/components/schemas/Leaderboard"}, 404, 422,
                params=[{"name": "game", "in": "path", "required": True, "schema": {"type": "string"}},
                        _query("players", _int_range(limits.SEATS))])},
        },
    }


@api.get("/openapi.json")
def openapi_json():  # type: ignore[no-untyped-def]
    return jsonify(spec())
