"""The Python SDK's defences, against a real SDK bot server on loopback with a secret: only calls
signed with that secret over the exact body are answered, a turn is answered once per match and seat
and never after a newer one, the match header must agree with the body, and ``GET /`` stays open."""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from referee import protocol
from sample_bots.sdk import Bot, BotServer, start_in_thread

SECRET = secrets.token_hex(24)
LEGAL = ["N1", "E2", "S3"]


@pytest.fixture(scope="module")
def bot() -> Iterator[BotServer]:
    server = start_in_thread(Bot(name="guarded", author="security-tests", games=["piranha-pedro"],
                                 act=lambda request: request["legal_actions"][-1], secret=SECRET))
    assert server.url.startswith("http://127.0.0.1:")
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def http() -> Iterator[requests.Session]:
    with requests.Session() as session:
        session.trust_env = False  # never a proxy: loopback only
        yield session


def act_body(match_id: str, turn: int, seat: int = 0) -> bytes:
    return protocol.encode(protocol.act_body(match_id, "piranha-pedro", seat, turn, "choose_card", 1000, 0,
                                             {"seat": seat}, LEGAL, None))


def post(http: requests.Session, bot: BotServer, path: str, body: bytes, headers: dict[str, str]) -> requests.Response:
    return http.post(bot.url + path, data=body, headers=headers, timeout=5)


def signed(match_id: str, turn: int, body: bytes, secret: str = SECRET) -> dict[str, str]:
    return protocol.headers(match_id, turn, secret, body)


def new_match() -> str:
    return f"sec-{uuid.uuid4().hex[:10]}"


def test_a_correctly_signed_act_is_answered(bot, http) -> None:
    match = new_match()
    body = act_body(match, 1)
    response = post(http, bot, "/act", body, signed(match, 1, body))
    assert response.status_code == 200 and response.json() == {"action": "S3"}


def test_get_identity_needs_no_signature(bot, http) -> None:
    response = http.get(bot.url + "/", timeout=5)
    assert response.status_code == 200
    assert response.json()["name"] == "guarded" and response.json()["apiversion"] == protocol.API_VERSION


@pytest.mark.parametrize("path", ["/act", "/start", "/end"])
def test_missing_wrong_or_foreign_signatures_get_401(bot, http, path) -> None:
    match = new_match()
    body = act_body(match, 1) if path == "/act" else (start_body if path == "/start" else end_body)(match)
    good = signed(match, 1, body)
    forged: dict[str, dict[str, Any]] = {
        "missing": {k: v for k, v in good.items() if k != protocol.SIGNATURE_HEADER},
        "empty": good | {protocol.SIGNATURE_HEADER: ""},
        "garbage": good | {protocol.SIGNATURE_HEADER: "sha256=" + "0" * 64},
        "another secret": good | {protocol.SIGNATURE_HEADER: protocol.sign(secrets.token_hex(24), body)},
        "no scheme": good | {protocol.SIGNATURE_HEADER: good[protocol.SIGNATURE_HEADER].removeprefix("sha256=")},
        "upper-case hex": good | {protocol.SIGNATURE_HEADER: good[protocol.SIGNATURE_HEADER].upper()},
        "truncated": good | {protocol.SIGNATURE_HEADER: good[protocol.SIGNATURE_HEADER][:-2]},
        "signature of an empty body": good | {protocol.SIGNATURE_HEADER: protocol.sign(SECRET, b"")},
    }
    for label, headers in forged.items():
        response = post(http, bot, path, body, headers)
        assert response.status_code == 401, label
        assert "signature" in response.json()["error"]
    # and the genuine call still goes through afterwards: refusals changed nothing
    assert post(http, bot, path, body, good).status_code == 200


def test_a_body_altered_after_signing_gets_401(bot, http) -> None:
    match = new_match()
    body = act_body(match, 1)
    headers = signed(match, 1, body)
    altered = [
        body.replace(b'"legal_actions":["N1","E2","S3"]', b'"legal_actions":["W3","E2","S3"]'),
        body.replace(b'"seat":0', b'"seat":1', 1),
        body + b" ",
        body[:-1] + b',"extra":1}',
        body.replace(b"{", b"{ ", 1),  # same JSON, other bytes: the signature is over bytes
    ]
    for variant in altered:
        assert variant != body
        assert post(http, bot, "/act", variant, headers).status_code == 401, variant[:80]


def test_a_replayed_or_older_turn_of_the_same_match_and_seat_gets_409(bot, http) -> None:
    match = new_match()
    for turn in (1, 2, 5):
        body = act_body(match, turn)
        assert post(http, bot, "/act", body, signed(match, turn, body)).status_code == 200
    replay = act_body(match, 5)
    response = post(http, bot, "/act", replay, signed(match, 5, replay))
    assert response.status_code == 409 and "stale" in response.json()["error"]
    for turn in (4, 3, 1, 0, -1):
        body = act_body(match, turn)
        assert post(http, bot, "/act", body, signed(match, turn, body)).status_code == 409, turn
    # other seats and other matches keep their own counters
    other_seat = act_body(match, 3, seat=1)
    assert post(http, bot, "/act", other_seat, signed(match, 3, other_seat)).status_code == 200
    other_match = new_match()
    body = act_body(other_match, 1)
    assert post(http, bot, "/act", body, signed(other_match, 1, body)).status_code == 200
    newer = act_body(match, 6)
    assert post(http, bot, "/act", newer, signed(match, 6, newer)).status_code == 200


def test_a_turn_header_that_disagrees_with_the_body_gets_409(bot, http) -> None:
    match = new_match()
    body = act_body(match, 3)
    headers = signed(match, 3, body) | {protocol.TURN_HEADER: "9"}
    assert post(http, bot, "/act", body, headers).status_code == 409
    assert post(http, bot, "/act", body, signed(match, 3, body)).status_code == 200  # turn 3 not used up


def test_a_match_header_that_disagrees_with_the_body_is_refused(bot, http) -> None:
    match, other = new_match(), new_match()
    body = act_body(match, 1)
    for headers in (signed(other, 1, body), {k: v for k, v in signed(match, 1, body).items()
                                             if k != protocol.MATCH_HEADER}):
        response = post(http, bot, "/act", body, headers)
        assert response.status_code == 400 and "match" in response.json()["error"]
    # refused calls do not use up the turn
    assert post(http, bot, "/act", body, signed(match, 1, body)).status_code == 200


def test_forged_calls_cannot_push_the_turn_counter_forward(bot, http) -> None:
    """A forger who sends turn 10**9 unsigned (or signed with a guess) must not make the referee's
    genuine next turn look stale."""
    match = new_match()
    for headers_for in (lambda b: {protocol.MATCH_HEADER: match, protocol.TURN_HEADER: str(10**9)},
                        lambda b: signed(match, 10**9, b, secret="guess")):
        body = act_body(match, 10**9)
        assert post(http, bot, "/act", body, headers_for(body)).status_code == 401
    body = act_body(match, 1)
    assert post(http, bot, "/act", body, signed(match, 1, body)).status_code == 200


def start_body(match_id: str, seat: int = 0) -> bytes:
    return protocol.encode(protocol.start_body(match_id, "piranha-pedro", {}, seat, [{"seat": 0, "name": "a"},
                                               {"seat": 1, "name": "b"}], protocol.TimeControls()))


def end_body(match_id: str, seat: int = 0) -> bytes:
    return protocol.encode(protocol.end_body(match_id, "piranha-pedro", seat, {"ranks": [1, 2], "scores": [1, 0]}, []))


def test_sdk_regression_a_signed_body_replayed_to_another_route_reset_the_stale_turn_check(bot, http) -> None:
    """The signature covers the body, not the path: a captured ``/act`` (or ``/start``) body posted to
    ``/end`` passed the signature check, and ``/end`` forgot the match's turns, so every earlier turn of
    the running match could then be replayed and was answered. Each route now takes only its own kind
    of body (400), and a match that ended has no more turns (409)."""
    match = new_match()
    turns = {turn: act_body(match, turn) for turn in (1, 2)}
    for turn, body in turns.items():
        assert post(http, bot, "/act", body, signed(match, turn, body)).status_code == 200
    opening = start_body(match)
    for path, body, turn in (("/end", turns[2], 2), ("/end", opening, 1), ("/start", turns[2], 2),
                             ("/act", opening, 1), ("/start", end_body(match), 1)):
        response = post(http, bot, path, body, signed(match, turn, body))
        assert response.status_code == 400 and "route" in response.json()["error"], (path, body[:60])
    assert post(http, bot, "/act", turns[1], signed(match, 1, turns[1])).status_code == 409  # still stale
    closing = end_body(match)
    assert post(http, bot, "/end", closing, signed(match, 0, closing)).status_code == 200
    for turn, body in turns.items():  # the match is over: its turns are not answered again
        assert post(http, bot, "/act", body, signed(match, turn, body)).status_code == 409, turn
