"""The "My bots" page: every owner action through forms that post, redirect and show their result once."""

from __future__ import annotations

from dataclasses import replace

import pytest
from sqlalchemy import select

from arena.storage.models import Bot
from tests.arena.owner_fakes import FakeHealth, ladder_matches
from tests.pages.builders import account, csrf_token, log_in

SICK = "http://127.0.0.1:9999"


@pytest.fixture
def owner(context):  # type: ignore[no-untyped-def]
    """A signed-in client of "olga" who owns bot "pedro", and the bot's id."""
    from arena.web import create_app

    client = create_app(context=replace(context, health_check=FakeHealth(sick={SICK}))).test_client()
    log_in(client, account(context, "olga"))
    page = client.get("/bots/new").get_data(as_text=True)
    posted = client.post("/bots/new", data={"name": "pedro", "url": "http://127.0.0.1:9001", "game": "piranha-pedro",
                                            "csrf_token": csrf_token(page)})
    assert posted.status_code == 303
    client.get(posted.headers["Location"])  # the one page that shows the new secret
    with context.db.session() as session:
        return client, session.scalar(select(Bot.id).where(Bot.name == "pedro"))


def _post(client, path: str, data: dict | None = None):  # type: ignore[no-untyped-def]
    token = csrf_token(client.get("/me/bots").get_data(as_text=True))
    return client.post(path, data={**(data or {}), "csrf_token": token})


def test_the_page_needs_a_signed_in_account(client) -> None:
    response = client.get("/me/bots")
    assert response.status_code == 302 and response.headers["Location"].startswith("/login?next=")


def test_the_header_name_leads_to_my_bots_and_signed_in_users_are_not_offered_log_in(owner) -> None:
    client, _bot_id = owner
    home = client.get("/").get_data(as_text=True)
    assert 'href="/me/bots"' in home and ">Log in<" not in home and ">Sign up<" not in home
    for path in ("/login", "/signup"):
        page = client.get(path).get_data(as_text=True)
        assert "You are signed in as olga" in page and 'name="token"' not in page and 'name="name"' not in page


def test_an_action_redirects_and_its_result_shows_once(owner) -> None:
    client, bot_id = owner
    response = _post(client, f"/me/bots/{bot_id}/pause")
    assert response.status_code == 303 and response.headers["Location"] == f"/me/bots#bot-{bot_id}"
    page = client.get("/me/bots").get_data(as_text=True)
    assert "Paused: it plays no new ladder match" in page and "paused by its owner" in page
    assert "Paused: it plays no new ladder match" not in client.get("/me/bots").get_data(as_text=True)
    assert _post(client, f"/me/bots/{bot_id}/resume").status_code == 303
    assert "Resumed: it is on the ladder." in client.get("/me/bots").get_data(as_text=True)


def test_a_new_secret_is_shown_once_and_never_put_in_the_cookie(owner, context) -> None:
    client, bot_id = owner
    response = _post(client, f"/me/bots/{bot_id}/secret")
    with context.db.session() as session:
        secret = session.get(Bot, bot_id).secret
    assert secret not in (client.get_cookie("session").value or "") and secret not in str(response.headers)
    shown = client.get("/me/bots")
    assert secret in shown.get_data(as_text=True) and shown.headers["Cache-Control"] == "no-store"
    assert secret not in client.get("/me/bots").get_data(as_text=True)  # a refresh: gone


def test_health_check_failures_are_explained_in_words(owner) -> None:
    client, bot_id = owner
    assert _post(client, f"/me/bots/{bot_id}/url", {"url": SICK}).status_code == 303
    page = client.get("/me/bots").get_data(as_text=True)
    assert "the new URL failed its health check" in page and "connection refused at the bot&#39;s address" in page
    assert "urllib3" not in page and "Errno" not in page


def test_versions_capacity_and_retire_through_the_page(owner, context) -> None:
    client, bot_id = owner
    assert _post(client, f"/me/bots/{bot_id}/version", {"url": "http://127.0.0.1:9002"}).status_code == 303
    page = client.get("/me/bots").get_data(as_text=True)
    assert "New version published" in page and "pedro (v1)" in page
    with context.db.session() as session:
        newest = session.scalar(select(Bot.id).where(Bot.name == "pedro"))
    assert _post(client, f"/me/bots/{newest}/capacity", {"capacity": "2"}).status_code == 303
    assert "Capacity saved." in client.get("/me/bots").get_data(as_text=True)
    _post(client, f"/me/bots/{newest}/capacity", {"capacity": "99"})
    assert "capacity must be a whole number from 1 to 4" in client.get("/me/bots").get_data(as_text=True)
    assert _post(client, f"/me/bots/{newest}/retire").status_code == 303
    bot_page = client.get(f"/bots/{newest}").get_data(as_text=True)
    assert "retired on" in bot_page and f'href="/bots/{bot_id}"' in bot_page  # the versions link each other


def test_recent_faults_and_the_probation_reason_show_with_their_excerpts(owner, context) -> None:
    from arena.services import probation

    client, bot_id = owner
    ladder_matches(context.db, bot_id, [True] * 4)
    with context.db.session() as session:
        probation.review(session, [bot_id], context.settings)
    page = client.get("/me/bots").get_data(as_text=True)
    assert "on probation: 4 of its last 4 ladder matches had faults" in page and "recent fault" in page
    assert "no complete answer before the deadline" in page
    public = client.application.test_client().get(f"/bots/{bot_id}").get_data(as_text=True)
    assert "on probation" in public and ">Piranha Pedro ladder, 3 players</a>" in public  # its ladder matches


def test_another_owners_bot_cannot_be_touched(owner, context) -> None:
    _client, bot_id = owner
    from arena.web import create_app

    other = create_app(context=context).test_client()
    log_in(other, account(context, "mallory"))
    assert _post(other, f"/me/bots/{bot_id}/retire").status_code == 303
    assert "only the bot&#39;s owner may change it" in other.get("/me/bots").get_data(as_text=True)
    with context.db.session() as session:
        assert session.get(Bot, bot_id).retired_at is None


def test_a_bot_is_renamed_through_the_page(owner, context) -> None:
    client, bot_id = owner
    assert _post(client, f"/me/bots/{bot_id}/name", {"name": "pedro-2"}).status_code == 303
    assert "Renamed." in client.get("/me/bots").get_data(as_text=True)
    _post(client, f"/me/bots/{bot_id}/name", {"name": "bad/name"})
    assert "name must be 1-60 characters" in client.get("/me/bots").get_data(as_text=True)
    with context.db.session() as session:
        assert session.get(Bot, bot_id).name == "pedro-2"
