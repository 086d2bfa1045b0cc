"""Who is calling, as far as the server has checked: the rate limits count on this and never on what a
client merely sends. Keying on the raw ``Authorization`` header or cookie let every ``Bearer junk<n>``
buy a fresh budget; only a token or page session that the database recognises names an account."""

from __future__ import annotations

from flask import current_app, g, request, session
from flask_limiter.util import get_remote_address

from arena.services.accounts import authenticate
from arena.services.web_sessions import session_account

SESSION_KEY = "sid"  # the page session cookie's only identity (arena.web.pages.common signs it in and out)


def bearer_token() -> str | None:
    """The token of an ``Authorization: Bearer`` header, unchecked."""
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def verified_account_id() -> int | None:
    """The account of a valid API token (under /api) or of a live page session (elsewhere); None for
    anything the database does not recognise. Looked up once per request."""
    if "verified_account_id" not in g:
        g.verified_account_id = _lookup()
    return g.verified_account_id


def _lookup() -> int | None:
    from_api = request.blueprint == "api"
    credential = bearer_token() if from_api else session.get(SESSION_KEY)
    if credential is None:
        return None
    with current_app.extensions["arena"].db.session(readonly=True) as db_session:
        account = authenticate(db_session, credential) if from_api else session_account(db_session, credential)
        return account.id if account is not None else None


def address_key() -> str:
    """The client address (the proxy's forwarded one when ``ARENA_PROXY_HOPS`` trusts it)."""
    return "ip:" + (get_remote_address() or "unknown")


def caller_key() -> str:
    """A rate limit's key: the verified account, else the client address."""
    account_id = verified_account_id()
    return f"account:{account_id}" if account_id is not None else address_key()
