"""Schemathesis against the real app's own OpenAPI document, through WSGI (no socket at all).

Every operation of ``/api/openapi.json`` is fuzzed with valid and invalid requests, with and without a
valid organizer token, on SQLite and on PostgreSQL: the app must never answer 5xx, and every answer
must be one the document promises (a documented status code, a documented content type, a body that
matches the documented schema). The app runs with the offline health check (tests/security/helpers),
so generated bot URLs can never make it resolve a name or connect anywhere.

Schemathesis' own pytest integration (``schema.parametrize``) does not run under pytest 9 (it writes
``Function._nodeid``), so each operation's strategies drive a plain Hypothesis test instead.

The regression tests below are the bugs this fuzzing (and the probes written next to it) found.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from sqlalchemy import func, select

from arena.composition import Context
from arena.config import load_settings
from arena.services.errors import MAX_ID
from arena.storage.db import Database
from arena.storage.models import Account, Bot, Tournament
from arena.web import create_app
from arena.web.api.openapi import spec
from referee.errors import RulesError
from referee.games import GAMES
from referee.games.pajarracos.rules import PARAM_NAMES as pajarracos_params
from referee.games.piranha.editions import PARAM_NAMES as piranha_params
from tests.arena.conftest import postgres_database
from tests.arena.helpers import auth
from tests.security.helpers import World, build_world, offline_health_check

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
# Never contacted: the offline health check answers for loopback literals and no queue plays matches.
LOOPBACK_URLS = ["http://127.0.0.1:9", "http://127.0.0.2:9", "http://[::1]:9"]
OPERATIONS = [(method.upper(), path) for path, item in spec()["paths"].items() for method in item]
EXAMPLES = 20  # per operation and database; 300 found nothing more than 20 did (see the report in git log)


@pytest.fixture
def fuzz_world(offline_context) -> World:
    """Accounts and three bots with small ids (1, 2, 3), so generated tournaments can name real bots."""
    return build_world(offline_context, LOOPBACK_URLS)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def fuzzed(request, tmp_path_factory) -> Iterator[tuple[Any, World]]:
    """One offline app and world per database for all the operations (what one operation's cases
    create, the next one's may find), and its OpenAPI document loaded by schemathesis."""
    tmp = tmp_path_factory.mktemp("fuzz")
    settings_ = load_settings({}, env="test", data_dir=tmp, secret_key="test-secret", rate_limits=False,
                              allow_loopback_bots=True)
    with contextlib.ExitStack() as stack:
        if request.param == "sqlite":
            db = Database(f"sqlite:///{tmp / 'arena.db'}")
            db.migrate()
            stack.callback(db.dispose)
        else:
            db = stack.enter_context(postgres_database())
        ctx = Context(settings=settings_, db=db, queue=None, health_check=offline_health_check)
        world = build_world(ctx, LOOPBACK_URLS)
        app = create_app(context=ctx)
        yield schemathesis.openapi.from_wsgi("/api/openapi.json", app), world


@pytest.mark.parametrize(("method", "path"), OPERATIONS, ids=[f"{m} {p}" for m, p in OPERATIONS])
def test_every_operation_answers_as_documented(method: str, path: str, fuzzed) -> None:
    schema, fuzz_world = fuzzed
    operation = schema[path][method]
    secured = bool(operation.definition.raw.get("security"))
    cases = st.one_of(operation.as_strategy(GenerationMode.POSITIVE), operation.as_strategy(GenerationMode.NEGATIVE))

    @given(case=cases, with_token=st.booleans())
    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
    def fuzz(case, with_token: bool) -> None:
        headers = auth(fuzz_world.organizer) if secured and with_token else None
        case.call_and_validate(headers=headers, checks=CHECKS)

    fuzz()


def test_the_fuzzed_document_covers_every_api_route(offline_app) -> None:
    """A route the document forgets would never be fuzzed: every /api rule is in it (the document
    itself, served at /api/openapi.json, is the one exception)."""
    documented = {(m, p) for m, p in OPERATIONS}
    for rule in offline_app.url_map.iter_rules():
        if not rule.rule.startswith("/api/") or rule.rule == "/api/openapi.json":
            continue
        path = rule.rule.replace("<int:", "{").replace("<", "{").replace(">", "}")
        for method in rule.methods - {"HEAD", "OPTIONS"}:
            assert (method, path) in documented, f"{method} {path} is not in the OpenAPI document"


# -- Tournament params: the document says only "object", so schemathesis cannot guess the names. ---------

PARAM_NAMES = {game: sorted(piranha_params if game.startswith("piranha") else pajarracos_params) for game in GAMES}
SCALARS = st.none() | st.booleans() | st.integers(-3, 40) | st.floats(allow_nan=False, allow_infinity=False) \
    | st.text(".SPF\x00é", max_size=8)
BOARD_ROWS = st.integers(2, 4).flatmap(lambda width: st.lists(
    st.text(".SPF", min_size=width, max_size=width), min_size=2, max_size=4))
JSON_VALUES = st.recursive(
    SCALARS | BOARD_ROWS,
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.sampled_from(["rows", "fish_squares", "name", "effect", "amount", "apples"]), inner,
                      max_size=3),
    max_leaves=16,
)
GAME_AND_PARAMS = st.sampled_from(sorted(GAMES)).flatmap(lambda game: st.tuples(
    st.just(game), st.dictionaries(st.sampled_from(PARAM_NAMES[game]), JSON_VALUES, max_size=2)))


@given(game_and_params=GAME_AND_PARAMS, players=st.integers(2, 6))
@settings(max_examples=200, deadline=None, database=None)
def test_game_params_are_refused_only_with_a_rules_error(game_and_params: tuple[str, dict], players: int) -> None:
    """The contract the API's tournament creation relies on: a bad parameter raises RulesError (422),
    never anything else (500)."""
    game, params = game_and_params
    with contextlib.suppress(RulesError):
        GAMES[game].initial_state(players, 0, params)


def test_any_tournament_params_are_created_or_refused_never_a_server_error(offline_client, offline_context) -> None:
    """Every game's own parameter names with any JSON value: 201 or 422, nothing else."""
    world = build_world(offline_context, LOOPBACK_URLS, games=tuple(sorted(GAMES)))

    @given(game_and_params=GAME_AND_PARAMS)
    @settings(max_examples=30, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
    def create(game_and_params: tuple[str, dict]) -> None:
        game, params = game_and_params
        body = {"game": game, "bots": list(world.bots_by_game[game]), "seats": 3, "params": params}
        response = offline_client.post("/api/tournaments", json=body, headers=auth(world.organizer))
        assert response.status_code in (201, 422), (game, params, response.get_json())

    create()


# -- Regressions: one test per bug found ------------------------------------------------------------------

def test_regression_ids_beyond_the_id_columns_were_a_server_error(offline_client, fuzz_world) -> None:
    """Found by schemathesis: the document allowed ids up to 2**62, the id columns are 32-bit on
    PostgreSQL ("integer out of range") and 64-bit on SQLite, so a big id in a path answered 500."""
    owner = auth(fuzz_world.owner)
    organizer = auth(fuzz_world.organizer)
    for bad_id in (MAX_ID + 1, 2**63, 10**32):
        _check_out_of_range_id(offline_client, owner, organizer, bad_id)
    # and the document now says where ids end
    document = offline_client.get("/api/openapi.json").get_json()
    assert document["paths"]["/api/bots/{bot_id}"]["get"]["parameters"][0]["schema"]["maximum"] == MAX_ID


def _check_out_of_range_id(offline_client, owner: dict, organizer: dict, bad_id: int) -> None:
    for method, path, headers, body in [
        ("GET", f"/api/bots/{bad_id}", {}, None),
        ("PATCH", f"/api/bots/{bad_id}", owner, {"name": "renamed"}),
        ("DELETE", f"/api/bots/{bad_id}", owner, None),
        ("GET", f"/api/tournaments/{bad_id}", {}, None),
        ("POST", f"/api/tournaments/{bad_id}/cancel", organizer, None),
        ("GET", f"/api/matches/{bad_id}", {}, None),
    ]:
        response = offline_client.open(path, method=method, headers=headers, json=body)
        assert response.status_code == 404, (method, path, response.get_json())
    for query in (f"bot={bad_id}", f"tournament={bad_id}"):
        assert offline_client.get(f"/api/matches?{query}").status_code == 422
    body = {"game": "piranha-pedro", "bots": [1, bad_id]}
    assert offline_client.post("/api/tournaments", json=body, headers=organizer).status_code == 422


def test_regression_nan_and_infinity_in_a_body_were_stored_or_a_server_error(offline_client, offline_context,
                                                                              fuzz_world) -> None:
    """Python's JSON parser takes NaN, Infinity and 1e400 (= inf). In tournament params they were
    stored as given: PostgreSQL refused the JSON (500), SQLite kept it and every later answer about
    the tournament carried ``NaN``, which is not JSON; Infinity as a board square crashed (500)."""
    rows = list(GAMES["piranha-pedro"].initial_state(2, 0).rules.board.rows)
    texts = ("NaN", "Infinity", "-Infinity", "1e400")
    for params in [f'{{"board": {{"rows": {_json(rows)}, "{key}": {value}}}}}'
                   for text in texts for key, value in (("name", text), ("fish_squares", f"[[0, {text}]]"))]:
        body = f'{{"game": "piranha-pedro", "bots": [1, 2], "params": {params}}}'
        response = offline_client.post("/api/tournaments", data=body, content_type="application/json",
                                       headers=auth(fuzz_world.organizer))
        assert response.status_code == 422 and "NaN" in response.get_json()["error"]
    with offline_context.db.session() as session:
        assert session.scalar(select(func.count()).select_from(Tournament)) == 0


MALFORMED_PARAMS = [
    ("piranha-pedro-ko-advanced", {"barrels": 5}),
    ("piranha-pedro-ko-advanced", {"barrels": None}),
    ("piranha-pedro", {"board": {"rows": ["..P", "..."], "fish_squares": [[0, "a"]]}}),
    ("piranha-pedro", {"board": {"rows": ["..P", "..."], "fish_squares": [[0, 0, 0]]}}),
    ("piranha-pedro-ko", {"board": {"rows": ["..P", "..."], "fish_squares": [[0, float("inf")]]}}),
]


def test_regression_malformed_piranha_params_were_a_server_error(offline_client, offline_context) -> None:
    """A barrels value that is not a list, or a fish square that is not two integers, raised TypeError,
    ValueError or OverflowError in the rules instead of RulesError: creating the tournament answered 500."""
    world = build_world(offline_context, LOOPBACK_URLS, games=tuple(sorted(GAMES)))
    for game, params in MALFORMED_PARAMS:
        with pytest.raises(RulesError):
            GAMES[game].initial_state(3, 0, params)
        if params.get("board", {}).get("fish_squares", [[0]])[0][-1] == float("inf"):
            continue  # the API refuses non-finite numbers before the rules see them (the NaN regression)
        body = {"game": game, "bots": list(world.bots_by_game[game]), "seats": 3, "params": params}
        response = offline_client.post("/api/tournaments", json=body, headers=auth(world.organizer))
        assert response.status_code == 422 and "params" in response.get_json()["error"], params


def test_regression_an_unparsable_bot_url_was_a_server_error(offline_client, fuzz_world) -> None:
    """urlsplit raises ValueError on a broken IPv6 literal; the bot checks let it through (500)."""
    owner = auth(fuzz_world.owner)
    for url in ("http://[::1", "http://[127.0.0.1]:9", "http://[zz::1]:9"):
        response = offline_client.post("/api/bots", json={"name": "new", "url": url, "game": "piranha-pedro"},
                                       headers=owner)
        assert response.status_code == 422 and "URL" in response.get_json()["error"], url
        response = offline_client.patch(f"/api/bots/{fuzz_world.bot_ids[0]}", json={"url": url}, headers=owner)
        assert response.status_code == 422 and "URL" in response.get_json()["error"], url


def test_regression_control_characters_in_a_bot_url_were_stored(offline_client, offline_context,
                                                                 fuzz_world) -> None:
    """A URL with NUL passed every check: PostgreSQL refused to store it (500), SQLite stored it."""
    for url in ("http://127.0.0.1:9/\x00", "http://127.0.0.1:9/a b", "http://127.0.0.1:9/\n/x",
                "http://127.0.0.1:9/\x7f"):
        response = offline_client.post("/api/bots", json={"name": "new", "url": url, "game": "piranha-pedro"},
                                       headers=auth(fuzz_world.owner))
        assert response.status_code == 422 and "control characters" in response.get_json()["error"], url
    with offline_context.db.session() as session:
        assert session.scalar(select(func.count()).select_from(Bot).where(Bot.name == "new")) == 0


def test_regression_nul_in_the_game_filter_was_a_server_error(offline_client, fuzz_world) -> None:
    """``GET /api/bots?game=%00`` sent the NUL to PostgreSQL, which refuses it in text (500)."""
    for game in ("\x00", "piranha\x00pedro", "no-such-game"):
        response = offline_client.get("/api/bots", query_string={"game": game})
        assert response.status_code == 200 and response.get_json() == []
    assert len(offline_client.get("/api/bots", query_string={"game": "piranha-pedro"}).get_json()) == 3


def test_regression_names_with_a_trailing_newline_were_accepted(offline_client, offline_context,
                                                                fuzz_world) -> None:
    """``re.match`` with ``$`` also matches before a final newline: "owner\\n" was a second account that
    looks like "owner", and a bot name could end in a newline too."""
    response = offline_client.post("/api/accounts", json={"name": "owner\n"})
    assert response.status_code == 422
    response = offline_client.post("/api/bots", json={"name": "bot\n", "url": LOOPBACK_URLS[0],
                                                      "game": "piranha-pedro"}, headers=auth(fuzz_world.owner))
    assert response.status_code == 422
    response = offline_client.patch(f"/api/bots/{fuzz_world.bot_ids[0]}", json={"name": "bot\n"},
                                    headers=auth(fuzz_world.owner))
    assert response.status_code == 422
    with offline_context.db.session() as session:
        assert session.scalar(select(func.count()).select_from(Account)) == 3


def test_regression_405_did_not_list_the_allowed_methods(offline_client) -> None:
    """Found by schemathesis (unsupported_method): RFC 9110 wants an ``Allow`` header with every 405."""
    response = offline_client.put("/api/bots")
    assert response.status_code == 405 and set(response.headers["Allow"].split(", ")) >= {"GET", "POST"}
    response = offline_client.put("/api/bots/1")
    assert set(response.headers["Allow"].split(", ")) >= {"GET", "PATCH", "DELETE"}
    assert response.get_json()["status"] == 405


def _json(value: object) -> str:
    import json

    return json.dumps(value)
