"""The page session cookie (issue 15): SameSite and HttpOnly always, Secure in production, an opaque
payload that names neither the account nor its token hash, and revoked on the server at sign-out, so
a copied cookie dies with the session it was copied from."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from datetime import timedelta

from sqlalchemy import func, select, update

from arena.services.accounts import authenticate
from arena.storage.models import Account, WebSession, utcnow
from arena.web import create_app
from tests.pages.builders import account, csrf_token, log_in


def _session_set_cookie(response) -> str:  # type: ignore[no-untyped-def]
    cookies = [h for h in response.headers.getlist("Set-Cookie") if h.startswith("session=")]
    assert cookies, response.headers
    return cookies[-1]


def _signed_in_as(client, name: str) -> bool:  # type: ignore[no-untyped-def]
    return f'title="Signed in">{name}' in client.get("/").get_data(as_text=True)


def test_session_cookie_without_samesite(client, context) -> None:
    """The old ``setdefault`` never applied (Flask already has the key): no SameSite was sent."""
    page = client.get("/login").get_data(as_text=True)
    response = client.post("/login", data={"token": account(context, "amy"), "csrf_token": csrf_token(page)})
    header = _session_set_cookie(response)
    assert "SameSite=Lax" in header and "HttpOnly" in header
    assert "Secure" not in header  # development and tests run over plain HTTP


def test_session_cookie_not_secure_in_production(context) -> None:
    production = replace(context, settings=replace(context.settings, env="production"))
    client = create_app(context=production).test_client()
    page = client.get("/login", base_url="https://localhost").get_data(as_text=True)
    response = client.post("/login", base_url="https://localhost", headers={"Referer": "https://localhost/login"},
                           data={"token": account(context, "ben"), "csrf_token": csrf_token(page)})
    assert response.status_code == 302
    header = _session_set_cookie(response)
    assert "Secure" in header and "SameSite=Lax" in header and "HttpOnly" in header


def test_session_cookie_readable_payload_carries_token_hash(app, client, context) -> None:
    """The payload held the account id and its token hash in clear (base64 JSON, only signed)."""
    log_in(client, account(context, "cat"))
    cookie = client.get_cookie("session")
    assert cookie is not None
    payload = app.session_interface.get_signing_serializer(app).loads(cookie.value)
    assert set(payload) <= {"sid", "csrf_token"}, payload  # random values only
    with context.db.session() as session:
        stored = session.scalar(select(WebSession))
        token_hash = session.get(Account, stored.account_id).token_hash
    assert len(payload["sid"]) >= 40 and hashlib.sha256(payload["sid"].encode()).hexdigest() == stored.key_hash
    assert token_hash not in cookie.value and "cat" not in str(payload) and "account" not in str(payload)


def test_copied_session_cookie_stays_valid_after_logout(app, client, context) -> None:
    log_in(client, account(context, "dan"))
    copied = client.get_cookie("session").value
    thief = app.test_client()
    thief.set_cookie("session", copied, domain="localhost")
    assert _signed_in_as(thief, "dan")
    home = client.get("/").get_data(as_text=True)
    assert client.post("/logout", data={"csrf_token": csrf_token(home)}).status_code == 302
    assert not _signed_in_as(client, "dan") and not _signed_in_as(thief, "dan")
    assert thief.get("/bots/new").status_code == 302  # the forms are closed to the copy too
    with context.db.session() as session:
        assert session.scalar(select(func.count()).select_from(WebSession)) == 0


def test_session_expires_on_the_server(client, context) -> None:
    log_in(client, account(context, "eve"))
    assert _signed_in_as(client, "eve")
    with context.db.session() as session:
        session.execute(update(WebSession).values(expires_at=utcnow() - timedelta(seconds=1)))
    assert not _signed_in_as(client, "eve")
    log_in(client, account(context, "fay"))  # a new sign-in sweeps the expired rows
    with context.db.session() as session:
        assert session.scalar(select(func.count()).select_from(WebSession)) == 1


def test_each_sign_in_gets_its_own_key(app, context) -> None:
    token = account(context, "gil")
    first, second = app.test_client(), app.test_client()
    log_in(first, token)
    log_in(second, token)
    assert first.get_cookie("session").value != second.get_cookie("session").value
    home = first.get("/").get_data(as_text=True)
    first.post("/logout", data={"csrf_token": csrf_token(home)})
    assert not _signed_in_as(first, "gil") and _signed_in_as(second, "gil")  # one sign-out ends one browser


def _sign_up(client, name: str):  # type: ignore[no-untyped-def]
    """The sign-up form posted; answers its 303 (the cookie it sets is the one a copy would be taken of)."""
    page = client.get("/signup").get_data(as_text=True)
    response = client.post("/signup", data={"name": name, "csrf_token": csrf_token(page)})
    assert response.status_code == 303, response.get_data(as_text=True)[:2000]
    return response


def _shown_token(client) -> str | None:  # type: ignore[no-untyped-def]
    page = client.get("/signup/done").get_data(as_text=True)
    return page.split('<code id="token">')[1].split("</code>")[0] if '<code id="token">' in page else None


def test_sign_up_regression_the_new_accounts_token_rode_in_the_session_cookie(app, client, context) -> None:
    """Sign-up kept the account's API token for the next page in Flask's cookie, which is signed, not
    encrypted: anyone holding the cookie after the 303 read a credential that never expires, and a
    copy of it showed the token again on ``/signup/done`` after its owner had seen it."""
    _sign_up(client, "hal")
    cookie = client.get_cookie("session")
    assert cookie is not None
    payload = app.session_interface.get_signing_serializer(app).loads(cookie.value)
    copy = app.test_client()
    copy.set_cookie("session", cookie.value, domain="localhost")
    token = _shown_token(client)
    assert token is not None and token.startswith("arena_")
    with context.db.session() as session:
        assert authenticate(session, token).name == "hal"
    assert token not in str(payload) and token[6:] not in str(payload), payload  # not in clear in the cookie
    assert _shown_token(copy) is None  # the copy taken before the token page shows nothing any more
    assert not _signed_in_as(copy, "hal") and _signed_in_as(client, "hal")  # and is no sign-in either
