"""Who may change what: every mutating endpoint in the OpenAPI document, with no token, wrong tokens,
another user's token and the right one.

The list of endpoints comes from the document served at ``/api/openapi.json``, so a new POST, PUT,
PATCH or DELETE is covered (or fails here, asking for a valid example body) as soon as it is documented;
``test_the_fuzzed_document_covers_every_api_route`` (test_api_fuzz.py) keeps the document complete.
"""

from __future__ import annotations

import base64
import secrets
from typing import Any

import pytest
from sqlalchemy import select

from arena.services.accounts import hash_token
from arena.storage.models import Account, Bot, BotStatus, Tournament, TournamentStatus
from arena.web.api.openapi import spec
from tests.arena.helpers import auth
from tests.security.helpers import World, build_world

MUTATING = ("post", "put", "patch", "delete")
ENDPOINTS = [(method.upper(), path, operation) for path, item in spec()["paths"].items()
             for method, operation in item.items() if method in MUTATING]
PUBLIC = {("POST", "/api/accounts")}  # sign-up: the one mutating endpoint anyone may call
# A valid body per request schema, so a refusal can only come from the token (bodies are validated first).
BODIES: dict[str, dict[str, Any]] = {
    "AccountCreate": {"name": "newcomer"},
    "BotCreate": {"name": "fresh-bot", "url": "http://127.0.0.1:9", "game": "piranha-pedro"},
    "BotUpdate": {"name": "renamed-bot"},
    "BotVersion": {},
    "BotPause": {"reason": "maintenance"},
    "BotCapacity": {"capacity": 1},
    "TournamentCreate": {"game": "piranha-pedro", "bots": "<bot ids>", "seats": 2, "seed": 3},
    "LadderPause": {"reason": "maintenance"},
    "LadderTune": {"weight": 2},
}
LADDER_ID = 1  # the first ladder the ``tournament_id`` fixture makes on its fresh database
URLS = ["http://127.0.0.1:9", "http://127.0.0.2:9"]


def _ids(endpoints: list) -> list[str]:
    return [f"{method} {path}" for method, path, _ in endpoints]


def _secured(operation: dict[str, Any]) -> bool:
    return bool(operation.get("security"))


def _owned_or_organizer_only(operation: dict[str, Any]) -> bool:
    """The document says who else is refused: a secured operation that may answer 403."""
    return _secured(operation) and "403" in operation["responses"]


def _request(world: World, tournament_id: int, path: str, operation: dict[str, Any]) -> tuple[str, Any]:
    """The concrete URL and a valid body for ``operation`` on the world's own objects."""
    values = {"bot_id": world.bot_ids[0], "tournament_id": tournament_id, "ladder_id": LADDER_ID}
    for parameter in operation.get("parameters", []):
        if parameter["in"] == "path":
            assert parameter["name"] in values, f"no test value for path parameter {parameter['name']}"
            path = path.replace("{" + parameter["name"] + "}", str(values[parameter["name"]]))
    body = None
    if "requestBody" in operation:
        name = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
        assert name in BODIES, f"add a valid example body for {name} to BODIES"
        body = dict(BODIES[name])
        if body.get("bots") == "<bot ids>":
            body["bots"] = list(world.bot_ids)
    return path, body


@pytest.fixture
def world(offline_context) -> World:
    return build_world(offline_context, URLS)


@pytest.fixture
def tournament_id(offline_context, world: World) -> int:
    from arena.services import tournaments as service
    from arena.services.ladders import ensure_ladders

    with offline_context.db.session() as session:
        ensure_ladders(session, offline_context.settings)
        organizer = session.scalar(select(Account).where(Account.is_admin))
        return service.create_tournament(session, organizer, {"game": "piranha-pedro", "bots": list(world.bot_ids),
                                                              "seats": 2}, b"key").id


def _state(ctx) -> tuple:
    """Everything a refused request must leave as it was."""
    with ctx.db.session() as session:
        accounts = sorted(session.scalars(select(Account.name)))
        bots = sorted(session.execute(select(Bot.id, Bot.name, Bot.url, Bot.status)).all())
        tournaments = sorted(session.execute(select(Tournament.id, Tournament.status)).all())
    return accounts, bots, tournaments


def test_the_document_lists_the_mutating_endpoints_and_only_sign_up_is_public() -> None:
    listed = {(method, path) for method, path, _ in ENDPOINTS}
    assert listed >= {("POST", "/api/accounts"), ("POST", "/api/bots"), ("PATCH", "/api/bots/{bot_id}"),
                      ("DELETE", "/api/bots/{bot_id}"), ("POST", "/api/tournaments"),
                      ("POST", "/api/tournaments/{tournament_id}/cancel")}
    assert {(method, path) for method, path, op in ENDPOINTS if not _secured(op)} == PUBLIC
    for method, path, operation in ENDPOINTS:
        if _secured(operation):
            assert "401" in operation["responses"], f"{method} {path} does not document its 401"


SECURED = [e for e in ENDPOINTS if _secured(e[2])]
RESTRICTED = [e for e in ENDPOINTS if _owned_or_organizer_only(e[2])]


def _wrong_tokens(world: World) -> dict[str, dict[str, str]]:
    owner = world.owner
    flipped = owner[:-1] + ("A" if owner[-1] != "A" else "B")
    return {
        "no header": {},
        "unknown well-formed token": auth("arena_" + secrets.token_urlsafe(32)),
        "owner token with one character changed": auth(flipped),
        "the stored hash of the owner token": auth(hash_token(owner)),
        "the hash with the token prefix": auth("arena_" + hash_token(owner)),
        "empty bearer": {"Authorization": "Bearer "},
        "bearer without a space": {"Authorization": f"Bearer{owner}"},
        "another scheme": {"Authorization": f"Token {owner}"},
        "basic auth": {"Authorization": "Basic " + base64.b64encode(f"owner:{owner}".encode()).decode()},
        "token in the query string only": {},
        "overlong token": auth(owner + "x" * 300),
    }


@pytest.mark.parametrize(("method", "path", "operation"), SECURED, ids=_ids(SECURED))
def test_a_missing_or_wrong_token_is_refused_with_401(offline_client, offline_context, world, tournament_id,
                                                       method, path, operation) -> None:
    url, body = _request(world, tournament_id, path, operation)
    before = _state(offline_context)
    for label, headers in _wrong_tokens(world).items():
        target = f"{url}?token={world.owner}" if label == "token in the query string only" else url
        response = offline_client.open(target, method=method, json=body, headers=headers)
        assert response.status_code == 401, (label, response.status_code, response.get_json())
        assert response.get_json()["status"] == 401 and "token" in response.get_json()["error"]
        assert response.headers["WWW-Authenticate"].startswith("Bearer")
    assert _state(offline_context) == before


@pytest.mark.parametrize(("method", "path", "operation"), RESTRICTED, ids=_ids(RESTRICTED))
def test_another_users_token_is_refused_with_403(offline_client, offline_context, world, tournament_id,
                                                  method, path, operation) -> None:
    """Bots: only the owner (an organizer is not the owner). Tournaments and ladders: only organizers (a
    bot owner is not one)."""
    url, body = _request(world, tournament_id, path, operation)
    others = [world.stranger, world.organizer] if "/bots/" in path else [world.stranger, world.owner]
    before = _state(offline_context)
    for token in others:
        response = offline_client.open(url, method=method, json=body, headers=auth(token))
        assert response.status_code == 403, (token == world.organizer, response.get_json())
        assert response.get_json()["status"] == 403
    assert _state(offline_context) == before


@pytest.mark.parametrize(("method", "path", "operation"), SECURED, ids=_ids(SECURED))
def test_the_right_token_is_accepted(offline_client, offline_context, world, tournament_id, method, path,
                                     operation) -> None:
    """The refusals above are not the endpoint failing for everyone: its rightful caller gets through."""
    url, body = _request(world, tournament_id, path, operation)
    token = world.organizer if "/tournaments" in path or "/ladders" in path else world.owner
    response = offline_client.open(url, method=method, json=body, headers=auth(token))
    ok = next(code for code in operation["responses"] if code.startswith("2"))
    assert response.status_code == int(ok), response.get_json()
    with offline_context.db.session() as session:
        if (method, path) == ("DELETE", "/api/bots/{bot_id}"):
            assert session.get(Bot, world.bot_ids[0]).status == BotStatus.DISABLED
        if path.endswith("/cancel"):
            assert session.get(Tournament, tournament_id).status == TournamentStatus.CANCELLED


def test_sign_up_is_public_and_ignores_any_token(offline_client, offline_context, world) -> None:
    response = offline_client.post("/api/accounts", json={"name": "anyone"})
    assert response.status_code == 201 and response.get_json()["is_admin"] is False
    for headers in (auth("arena_" + secrets.token_urlsafe(32)), auth(world.organizer), {"Authorization": "junk"}):
        name = f"user{secrets.token_hex(4)}"
        response = offline_client.post("/api/accounts", json={"name": name}, headers=headers)
        assert response.status_code == 201, response.get_json()
        assert response.get_json()["is_admin"] is False  # an organizer's token never makes an organizer
    # sign-up cannot be used to choose privileges
    response = offline_client.post("/api/accounts", json={"name": "sneaky", "is_admin": True})
    assert response.status_code == 422
    with offline_context.db.session() as session:
        assert session.scalar(select(Account).where(Account.name == "sneaky")) is None
