"""Sign-up, bot submission with its health check, and who may change what."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests import bot_zoo
from tests.arena.helpers import auth, token_for


def test_sign_up_answers_a_token_once_and_stores_only_its_hash(client, context) -> None:
    response = client.post("/api/accounts", json={"name": "alice"})
    assert response.status_code == 201
    token = response.get_json()["token"]
    assert token.startswith("arena_")
    from sqlalchemy import select

    from arena.storage.models import Account

    with context.db.session() as session:
        stored = session.scalar(select(Account).where(Account.name == "alice"))
        assert stored is not None and token not in stored.token_hash and len(stored.token_hash) == 64
    assert client.post("/api/accounts", json={"name": "alice"}).status_code == 409


@pytest.mark.parametrize("body", [{}, {"name": ""}, {"name": "x"}, {"name": "a b"}, {"name": 5},
                                  {"name": "ok", "extra": 1}])
def test_sign_up_refuses_bad_names_with_a_clear_message(client, body) -> None:
    response = client.post("/api/accounts", json=body)
    assert response.status_code == 422
    assert response.get_json()["error"]


def test_sign_up_can_be_switched_off(context) -> None:
    from arena.web import create_app

    closed = replace(context, settings=replace(context.settings, open_signup=False))
    response = create_app(context=closed).test_client().post("/api/accounts", json={"name": "bob"})
    assert response.status_code == 403 and "sign-up" in response.get_json()["error"]


def test_non_json_and_oversized_bodies_are_refused(client) -> None:
    assert client.post("/api/accounts", data="name=alice").status_code == 422
    assert client.post("/api/accounts", data="x" * 300_000, content_type="application/json").status_code == 413


def test_submit_a_bot_passes_the_health_check_and_answers_its_secret(client, context, random_bots) -> None:
    token = token_for(context, "alice")
    response = client.post("/api/bots", json={"name": "rnd", "url": random_bots[0].url, "game": "piranha-pedro"},
                           headers=auth(token))
    assert response.status_code == 201, response.get_json()
    bot = response.get_json()
    assert len(bot["secret"]) == 48 and bot["url"] == random_bots[0].url and bot["owner"] == "alice"
    public = client.get(f"/api/bots/{bot['id']}").get_json()
    assert "secret" not in public and "url" not in public
    other = token_for(context, "mallory")
    assert "url" not in client.get(f"/api/bots/{bot['id']}", headers=auth(other)).get_json()
    assert client.get(f"/api/bots/{bot['id']}", headers=auth(token)).get_json()["url"] == random_bots[0].url
    listed = client.get("/api/bots").get_json()
    assert [b["id"] for b in listed] == [bot["id"]] and "url" not in listed[0]


def test_a_bot_that_fails_its_health_check_is_refused_with_what_failed(client, context) -> None:
    token = token_for(context, "alice")
    with bot_zoo.zoo_bot(bot_zoo.on_act(bot_zoo.illegal)) as zoo:
        response = client.post("/api/bots", json={"name": "bad", "url": zoo.url, "game": "piranha-pedro"},
                               headers=auth(token))
    assert response.status_code == 422
    problems = response.get_json()["details"]["problems"]
    assert any("illegal" in p for p in problems)
    dead = f"http://127.0.0.1:{bot_zoo.closed_port()}"
    response = client.post("/api/bots", json={"name": "dead", "url": dead, "game": "piranha-pedro"},
                           headers=auth(token))
    assert response.status_code == 422 and "connection_error" in response.get_json()["details"]["problems"][0]


def test_a_bot_that_passes_with_warnings_is_told_them_once(client, context) -> None:
    """Admitted (warnings are no faults), and the 201 says what costs the bot time, with the fix."""
    token = token_for(context, "alice")
    with bot_zoo.zoo_bot(bot_zoo.split_writes) as zoo:
        response = client.post("/api/bots", json={"name": "nagle", "url": zoo.url, "game": "piranha-pedro"},
                               headers=auth(token))
    assert response.status_code == 201, response.get_json()
    warnings = response.get_json()["warnings"]
    assert any(w.startswith("nagle:") and "TCP_NODELAY" in w for w in warnings), warnings


def test_a_clean_submission_has_no_warnings(client, context, random_bots) -> None:
    """The SDK refuses replays only once it has its secret: the submission does not probe them."""
    token = token_for(context, "alice")
    response = client.post("/api/bots", json={"name": "rnd", "url": random_bots[2].url, "game": "pajarracos"},
                           headers=auth(token))
    assert response.status_code == 201 and "warnings" not in response.get_json(), response.get_json()


def test_the_422_names_the_arena_check_and_its_fix(client, context) -> None:
    """The health check is ``arena check``: the refusal names the check, the fault kind and the fix."""
    token = token_for(context, "alice")
    with bot_zoo.zoo_bot(bot_zoo.on_act(bot_zoo.wrong_turn)) as zoo:
        response = client.post("/api/bots", json={"name": "bad", "url": zoo.url, "game": "piranha-pedro-ko"},
                               headers=auth(token))
    assert response.status_code == 422
    problems = response.get_json()["details"]["problems"]
    assert any(p.startswith("/act piranha-pedro-ko ") and "wrong_turn" in p and 'fix: echo the "turn"' in p
               for p in problems), problems


def test_a_bot_that_does_not_play_the_game_is_refused(client, context, random_bots) -> None:
    token = token_for(context, "alice")
    with bot_zoo.zoo_bot(lambda req, sock: bot_zoo.ok(sock, {"apiversion": "1", "name": "x", "author": "y",
                                                             "version": "1", "games": ["chess"]})) as zoo:
        response = client.post("/api/bots", json={"name": "chess", "url": zoo.url, "game": "pajarracos"},
                               headers=auth(token))
    assert response.status_code == 422
    assert "pajarracos" in str(response.get_json()["details"])  # the game asked for; the bot's list is not echoed


@pytest.mark.parametrize("url", ["ftp://example.com/", "javascript:alert(1)", "http://", "http://u:p@127.0.0.1:1/",
                                 "http://127.0.0.1:1/?q=1", "not a url"])
def test_bad_url_shapes_are_refused(client, context, url) -> None:
    token = token_for(context, "alice")
    response = client.post("/api/bots", json={"name": "b", "url": url, "game": "piranha-pedro"}, headers=auth(token))
    assert response.status_code == 422


def test_mutating_bot_endpoints_need_the_owners_token(client, context, random_bots) -> None:
    owner = token_for(context, "alice")
    other = token_for(context, "mallory")
    created = client.post("/api/bots", json={"name": "rnd", "url": random_bots[0].url, "game": "piranha-pedro"},
                          headers=auth(owner)).get_json()
    path = f"/api/bots/{created['id']}"
    for headers, status in (({}, 401), (auth("arena_wrong"), 401), ({"Authorization": "Basic abc"}, 401),
                            (auth(other), 403)):
        assert client.patch(path, json={"name": "renamed"}, headers=headers).status_code == status
        assert client.delete(path, headers=headers).status_code == status
    assert client.post("/api/bots", json={"name": "x", "url": random_bots[0].url, "game": "piranha-pedro"}
                       ).status_code == 401
    response = client.patch(path, json={"name": "renamed"}, headers=auth(owner))
    assert response.status_code == 200 and response.get_json()["name"] == "renamed"
    assert client.patch(path, json={"status": "disabled"}, headers=auth(owner)).get_json()["status"] == "disabled"
    assert client.delete(path, headers=auth(owner)).status_code == 204
    assert client.get(path).get_json()["status"] == "disabled"


def test_unknown_routes_and_ids_answer_json(client) -> None:
    for path in ("/api/bots/999", "/api/matches/5", "/api/tournaments/7"):
        response = client.get(path)
        assert response.status_code == 404 and response.get_json()["error"]
    response = client.get("/api/nothing-here")
    assert response.status_code == 404 and response.is_json


def test_games_and_openapi_are_served(client) -> None:
    games = client.get("/api/games").get_json()
    assert {g["name"] for g in games} >= {"piranha-pedro", "pajarracos"}
    spec = client.get("/api/openapi.json").get_json()
    assert spec["openapi"].startswith("3.") and "/api/bots" in spec["paths"]


@pytest.mark.parametrize("body", [{}, {"name": 5}, "not json", None])
def test_post_bots_without_a_token_validated_the_body_before_answering_401(client, body) -> None:
    """Regression: no token and a bad body answered 422 (the body was checked before who asked)."""
    if body is None:
        response = client.post("/api/bots", data=b"{", content_type="application/json")
    elif isinstance(body, str):
        response = client.post("/api/bots", data=body, content_type="text/plain")
    else:
        response = client.post("/api/bots", json=body)
    assert response.status_code == 401, response.get_json()
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
    assert client.patch("/api/bots/1", json={"nonsense": True}).status_code == 401
    assert client.post("/api/tournaments", json={"nonsense": True}).status_code == 401


@pytest.mark.parametrize("copy", ["pp-heuristic", "PP-Heuristic", "pp_heuristic", "pp heur1stic", "pp-heurlstic",
                                  "pp.heuristic.", "PP--HEURISTIC"])
def test_bot_name_regression_another_owner_took_a_famous_bots_name(client, context, random_bots, copy) -> None:
    """Bot names were unique per owner only: anybody could submit "pp-heuristic" (or "pp-heur1stic") for
    the same game, and the match lists, replays and head-to-head pages, which name bots without their
    owners, showed two "pp-heuristic"s. A name that looks like another owner's bot of the game is now
    refused (409) at submission and at renaming; other games, and other names, stay free."""
    url = random_bots[0].url
    alice, mallory = token_for(context, "alice"), token_for(context, "mallory")
    famous = client.post("/api/bots", json={"name": "pp-heuristic", "url": url, "game": "piranha-pedro"},
                         headers=auth(alice))
    assert famous.status_code == 201, famous.get_json()
    response = client.post("/api/bots", json={"name": copy, "url": url, "game": "piranha-pedro"}, headers=auth(mallory))
    assert response.status_code == 409 and "another owner" in response.get_json()["error"], response.get_json()
    mine = client.post("/api/bots", json={"name": "pp-heuristic-2", "url": url, "game": "piranha-pedro"},
                       headers=auth(mallory))
    assert mine.status_code == 201, mine.get_json()
    renamed = client.patch(f"/api/bots/{mine.get_json()['id']}", json={"name": copy}, headers=auth(mallory))
    assert renamed.status_code == 409
    elsewhere = client.post("/api/bots", json={"name": copy, "url": url, "game": "pajarracos"}, headers=auth(mallory))
    assert elsewhere.status_code == 201, elsewhere.get_json()


def test_regression_the_health_check_holds_a_bot_to_the_limit_its_ladder_matches_are_played_under() -> None:
    """Regression (a user's trial, twenty-first session): the check at submission (and at a probation's re-check)
    allowed 3 s a decision while the ladder plays under ``ARENA_DECISION_MS`` (1 s): a bot answering in 1.5 s
    was admitted, forfeited every ladder match by timeout, went on probation, passed its re-check, and round
    again. The check now uses the arena's limit."""
    import time

    from arena.config import load_settings
    from arena.services.bots import default_health_check
    from sample_bots.random_bot import make_bot
    from sample_bots.sdk import start_in_thread

    bot = make_bot(1)
    thinks = bot.act

    def slow(request):  # type: ignore[no-untyped-def]
        time.sleep(1.3)
        return thinks(request)

    bot.act = slow
    server = start_in_thread(bot)
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        strict = default_health_check(url, "s", "piranha-pedro", load_settings({}, allow_loopback_bots=True,
                                                                                decision_ms=1000))
        assert not strict.ok and any("1000 ms" in problem for problem in strict.problems), strict.problems
        loose = default_health_check(url, "s", "piranha-pedro", load_settings({}, allow_loopback_bots=True,
                                                                               decision_ms=3000))
        assert loose.ok, loose.problems
    finally:
        server.shutdown()
        server.server_close()
