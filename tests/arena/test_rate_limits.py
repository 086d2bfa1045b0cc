"""Sign-up, bot submission and tournament creation are rate limited (429 with a JSON error)."""

from __future__ import annotations

from dataclasses import replace

from arena.web import create_app
from tests.arena.helpers import auth, token_for


def _limited_client(context, **rates):
    settings = replace(context.settings, rate_limits=True, **rates)
    return create_app(context=replace(context, settings=settings)).test_client()


def test_sign_up_is_rate_limited_per_client(context) -> None:
    client = _limited_client(context, signup_rate="3/hour")
    codes = [client.post("/api/accounts", json={"name": f"user{i}"}).status_code for i in range(5)]
    assert codes == [201, 201, 201, 429, 429]
    body = client.post("/api/accounts", json={"name": "late"}).get_json()
    assert body["status"] == 429 and "too many requests" in body["error"]


def test_bot_submission_is_rate_limited_per_token(context, random_bots) -> None:
    client = _limited_client(context, bot_rate="2/hour")
    alice, bob = token_for(context, "alice"), token_for(context, "bob")
    codes = [client.post("/api/bots", json={"name": f"b{i}", "url": random_bots[0].url, "game": "piranha-pedro"},
                         headers=auth(alice)).status_code for i in range(3)]
    assert codes == [201, 201, 429]
    other = client.post("/api/bots", json={"name": "b0", "url": random_bots[0].url, "game": "piranha-pedro"},
                        headers=auth(bob))
    assert other.status_code == 201  # another caller has its own budget


def test_tournament_creation_is_rate_limited(context) -> None:
    client = _limited_client(context, tournament_rate="1/hour")
    admin = token_for(context, "boss", admin=True)
    first = client.post("/api/tournaments", json={"game": "chess", "bots": [1, 2]}, headers=auth(admin))
    second = client.post("/api/tournaments", json={"game": "chess", "bots": [1, 2]}, headers=auth(admin))
    assert first.status_code == 422 and second.status_code == 429


def test_reads_are_not_limited(context) -> None:
    client = _limited_client(context, signup_rate="1/hour")
    assert all(client.get("/api/games").status_code == 200 for _ in range(20))
