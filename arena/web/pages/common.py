"""What every page view needs: the context, a unit of work, who is looking, and the page shell."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from flask import current_app, g, render_template, request, session
from sqlalchemy.orm import Session

from arena.bootstrap import Context
from arena.services.errors import NotFound
from arena.storage.models import Account

MAX_ID = 2**31 - 1  # id columns are 32-bit on PostgreSQL: a bigger id names nothing
SESSION_ACCOUNT = "account_id"
SESSION_TOKEN_HASH = "token_hash"


def existing_id(value: int, what: str) -> int:
    """``NotFound`` for an id no row can have, before the database sees it (PostgreSQL would refuse it)."""
    if not 1 <= value <= MAX_ID:
        raise NotFound(f"no {what} {value}")
    return value


def context() -> Context:
    return current_app.extensions["arena"]


@contextmanager
def unit_of_work(readonly: bool = False) -> Iterator[Session]:
    """One transaction; a GET (or a ``readonly`` unit) never takes the database's write lock."""
    with context().db.session(readonly=readonly or request.method in ("GET", "HEAD")) as db_session:
        yield db_session


def viewer(db_session: Session) -> Account | None:
    """The signed-in account, if the session still matches its token (a changed token signs it out)."""
    account_id = session.get(SESSION_ACCOUNT)
    if account_id is None:
        return None
    account = db_session.get(Account, account_id)
    if account is None or account.token_hash != session.get(SESSION_TOKEN_HASH):
        session.clear()
        return None
    g.viewer = {"id": account.id, "name": account.name, "is_admin": account.is_admin}
    return account


def address_key() -> str:
    """Sign-ups count per client address: each sign-up signs a new account in, so an account key would
    let one client sign up without end."""
    return f"ip:{request.remote_addr}"


def rate_limit_key() -> str:
    """Who a page's rate limit counts: the signed-in account (the signed session names it and cannot be
    forged), else the client address. Never the raw cookie, which a client can change at will."""
    account_id = session.get(SESSION_ACCOUNT)
    return f"account:{account_id}" if account_id is not None else f"ip:{request.remote_addr}"


def sign_in(account: Account) -> None:
    """A fresh session (no fixation), remembered by account id and token hash, never by the token."""
    sign_out()
    session[SESSION_ACCOUNT] = account.id
    session[SESSION_TOKEN_HASH] = account.token_hash


def sign_out() -> None:
    session.clear()
    g.pop(current_app.config.get("WTF_CSRF_FIELD_NAME", "csrf_token"), None)  # so this page gets a new CSRF token


def page(template: str, status: int = 200, **values: Any) -> tuple[str, int]:
    """Render a page; the header knows who is signed in (looked up once per request)."""
    if "viewer" not in g and SESSION_ACCOUNT in session:
        with unit_of_work() as db_session:
            viewer(db_session)
    return render_template(template, **values), status


def signed_in_name() -> str | None:
    """The header's account name (set by ``viewer`` or ``page``)."""
    info = g.get("viewer")
    return info["name"] if info else None
