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
    other = client.post("/api/bots", json={"name": "bob", "url": random_bots[0].url, "game": "piranha-pedro"},
                        headers=auth(bob))
    assert other.status_code == 201  # another caller has its own budget


def test_tournament_creation_is_rate_limited(context) -> None:
    from tests.arena.owner_fakes import owner_with_bot

    bots = [owner_with_bot(context.db, name, f"pp-{name}", f"http://127.0.0.1:900{i}")[1]
            for i, name in enumerate(("alice", "bob"))]
    client = _limited_client(context, tournament_rate="2/hour")
    admin = token_for(context, "boss", admin=True)
    body = {"game": "piranha-pedro", "bots": bots, "seats": 2}
    made = [client.post("/api/tournaments", json=body, headers=auth(admin)).status_code for _ in range(2)]
    refused = client.post("/api/tournaments", json=body, headers=auth(admin))
    assert made == [201, 201] and refused.status_code == 429
    assert "try again in " in refused.get_json()["error"] and refused.headers["Retry-After"]


def test_regression_refused_tournaments_spent_the_organizers_budget(context) -> None:
    """A user's trial: 20 requests refused as not valid (422) counted against the hour's 30 tournaments, and
    the organizer, who had made 10, could make none for 50 minutes. Only a tournament made counts now."""
    from tests.arena.owner_fakes import owner_with_bot

    bots = [owner_with_bot(context.db, name, f"pp-{name}", f"http://127.0.0.1:900{i}")[1]
            for i, name in enumerate(("alice", "bob"))]
    client = _limited_client(context, tournament_rate="2/hour")
    admin = token_for(context, "boss", admin=True)
    wrong = [client.post("/api/tournaments", json={"game": "piranha-pedro", "bots": bots, "seats": 9},
                         headers=auth(admin)).status_code for _ in range(5)]
    good = {"game": "piranha-pedro", "bots": bots, "seats": 2}
    assert wrong == [422] * 5
    assert client.post("/api/tournaments", json=good, headers=auth(admin)).status_code == 201


def test_reads_are_not_limited(context) -> None:
    client = _limited_client(context, signup_rate="1/hour")
    assert all(client.get("/api/games").status_code == 200 for _ in range(20))


def test_sign_up_rate_limit_bypass_with_junk_bearer_tokens(context) -> None:
    """The limiter keyed on any ``Authorization: Bearer`` header, valid or not: ``Bearer junk<n>``
    bought a fresh budget every time. Sign-up counts per address, whatever credential is sent."""
    client = _limited_client(context, signup_rate="3/hour")
    valid = token_for(context, "existing")
    codes = [client.post("/api/accounts", json={"name": f"user{i}"}, headers=auth(f"junk{i}")).status_code
             for i in range(4)]
    codes.append(client.post("/api/accounts", json={"name": "user9"}, headers=auth(valid)).status_code)
    assert codes == [201, 201, 201, 429, 429]


def test_bot_submission_with_junk_tokens_counts_against_the_address(context) -> None:
    """Only a token the database recognises names an account; anything else is the caller's address."""
    client = _limited_client(context, bot_rate="2/hour")
    body = {"name": "b", "url": "http://127.0.0.1:9", "game": "piranha-pedro"}
    codes = [client.post("/api/bots", json=body, headers=auth(f"arena_junk{i}")).status_code for i in range(3)]
    assert codes == [401, 401, 429]
    valid = client.post("/api/bots", json={}, headers=auth(token_for(context, "carol")))
    assert valid.status_code == 422  # a real account has its own budget


def test_sign_up_page_and_api_share_one_budget(context) -> None:
    client = _limited_client(context, signup_rate="2/hour")
    assert client.post("/api/accounts", json={"name": "api1"}).status_code == 201
    form = client.get("/signup").get_data(as_text=True)
    csrf = form.split('name="csrf_token" type="hidden" value="')[1].split('"')[0]
    assert client.post("/signup", data={"name": "page1", "csrf_token": csrf}).status_code == 303
    assert client.post("/api/accounts", json={"name": "api2"}).status_code == 429
    stranger = client.application.test_client()  # signed out, the same address
    fresh = stranger.get("/signup").get_data(as_text=True)
    csrf = fresh.split('name="csrf_token" type="hidden" value="')[1].split('"')[0]
    refused = stranger.post("/signup", data={"name": "page2", "csrf_token": csrf})
    # a page's refusal says when to come back (it said "30 per 1 hour" and no more)
    assert refused.status_code == 429 and "Try again in " in refused.get_data(as_text=True)
