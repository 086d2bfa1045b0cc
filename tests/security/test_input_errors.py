"""Input that answered 500 (issue 15), now always a 4xx: a JSON error under /api, an error page or the
form again on the pages. Found by hand and by a small fuzzer over every GET route's path and query
(huge and negative ids, NUL, undecodable bytes, NaN, CRLF) and the page forms' fields, which found
nothing more on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select

from arena.services.untrusted_json import MAX_DEPTH
from arena.storage.models import Bot
from tests.arena.helpers import auth
from tests.pages.builders import csrf_token, log_in
from tests.security.helpers import build_world

LOOPBACK = ["http://127.0.0.1:9", "http://127.0.0.2:9"]
DEEP = {"100,000 brackets": "[" * 100_000 + "]" * 100_000, "5,000 objects": '{"a":' * 5000 + "1" + "}" * 5000,
        "400 objects": '{"a":' * 400 + "1" + "}" * 400,
        f"{MAX_DEPTH + 1} lists": "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)}


@pytest.fixture
def world(offline_context):  # type: ignore[no-untyped-def]
    return build_world(offline_context, LOOPBACK)


def _json_endpoints(world) -> list[tuple[str, str, dict]]:  # type: ignore[no-untyped-def]
    return [("POST", "/api/accounts", {}), ("POST", "/api/bots", auth(world.owner)),
            ("POST", "/api/tournaments", auth(world.organizer)),
            ("PATCH", f"/api/bots/{world.bot_ids[0]}", auth(world.owner))]


@pytest.mark.parametrize("body", DEEP.values(), ids=DEEP.keys())
def test_regression_deeply_nested_json_was_a_recursion_error(offline_client, world, body: str) -> None:
    """Python's parser (and the NaN check after it) recursed once per level: RecursionError, a 500."""
    for method, path, headers in _json_endpoints(world):
        response = offline_client.open(path, method=method, data=body, content_type="application/json",
                                       headers=headers)
        assert response.status_code == 422, (method, path, response.status_code)
        assert response.is_json and "nested more than" in response.get_json()["error"]


def test_regression_deeply_nested_tournament_form_params_were_a_recursion_error(client, context) -> None:
    world = build_world(context, LOOPBACK)
    log_in(client, world.organizer)
    for name, params in DEEP.items():
        if name.startswith("100,000"):
            continue  # percent-encoded, it is over the request size limit (413)
        token = csrf_token(client.get("/tournaments/new").get_data(as_text=True))
        response = client.post("/tournaments/new", data={
            "csrf_token": token, "game": "piranha-pedro", "seats": "2", "cycles": "1", "time_limit_ms": "1000",
            "seed": "0", "bots": [str(b) for b in world.bot_ids], "params": params})
        assert response.status_code == 422 and "nested more than" in response.get_data(as_text=True)


@pytest.mark.parametrize("text, message", [
    ('"http://127.0.0.1:9/\\ud800"', "lone surrogate"), ('"http://127.0.0.1:9/\\u0000"', "NUL"),
    ("1" + "0" * 5000, "not valid JSON"), ("NaN", "NaN")])
def test_regression_lone_surrogate_in_a_bot_url_was_a_server_error(offline_client, offline_context, world,
                                                                   text: str, message: str) -> None:
    """A lone surrogate (``"\\ud800"``) passed every check and reached the database driver, which cannot
    encode it (UnicodeEncodeError, a 500); NUL and 5,000-digit numbers are refused alike."""
    body = f'{{"name": "odd", "url": {text}, "game": "piranha-pedro"}}'
    response = offline_client.post("/api/bots", data=body, content_type="application/json",
                                   headers=auth(world.owner))
    assert response.status_code == 422 and message in response.get_json()["error"], response.get_json()
    with offline_context.db.session() as session:
        assert session.scalar(select(func.count()).select_from(Bot).where(Bot.name == "odd")) == 0


JSON_TEXT = st.recursive(
    st.sampled_from(["null", "1e400", "NaN", "-0", "1" * 30, '"\\ud800"', '"\\u0000"', '"é"', "true", '"x"']),
    lambda inner: st.lists(inner, max_size=3).map(lambda xs: "[" + ",".join(xs) + "]")
    | st.lists(st.tuples(st.sampled_from(['"name"', '"url"', '"game"', '"bots"', '"\\udfff"']), inner), max_size=3)
    .map(lambda kv: "{" + ",".join(f"{k}:{v}" for k, v in kv) + "}"),
    max_leaves=12,
) | st.text(max_size=40).map(lambda t: t.encode("utf-8", "surrogatepass").decode("latin-1"))


def test_fuzzed_json_bodies_never_answer_5xx(offline_client, world) -> None:
    endpoints = _json_endpoints(world)

    @given(body=JSON_TEXT, which=st.integers(0, len(endpoints) - 1))
    @settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
    def post(body: str, which: int) -> None:
        method, path, headers = endpoints[which]
        response = offline_client.open(path, method=method, data=body.encode("latin-1"),
                                       content_type="application/json", headers=headers)
        assert response.status_code < 500 and response.is_json, (path, body, response.status_code)

    post()
