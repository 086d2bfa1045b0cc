"""What every page view needs: the context, a unit of work, who is looking, and the page shell."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from flask import current_app, g, render_template, session
from sqlalchemy.orm import Session

from arena.services.accounts import Account
from arena.services.web_sessions import close_session, open_session, session_account
from arena.web.context import context, unit_of_work
from arena.web.identity import SESSION_KEY


def viewer(db_session: Session) -> Account | None:
    """The signed-in account, if the session's key is still live on the server (signing out, anywhere
    this cookie was copied to, or the key's expiry ends it)."""
    key = session.get(SESSION_KEY)
    if key is None:
        return None
    account = session_account(db_session, key)
    if account is None:
        session.pop(SESSION_KEY, None)  # dead key: forget it, keep the CSRF token of the open form
        return None
    g.viewer = {"id": account.id, "name": account.name, "is_admin": account.is_admin}
    return account


def sign_in(db_session: Session, account: Account) -> None:
    """A fresh session (no fixation) whose cookie carries only a new random key; the account stays on
    the server (``arena.services.web_sessions``)."""
    sign_out(db_session)
    lifetime = timedelta(days=context().settings.session_days)
    session[SESSION_KEY] = open_session(db_session, account, lifetime)


def sign_out(db_session: Session) -> None:
    """Revoke the key on the server, so a copy of this cookie is signed out too, then forget it all."""
    close_session(db_session, session.get(SESSION_KEY))
    session.clear()
    g.pop("viewer", None)
    g.pop(current_app.config.get("WTF_CSRF_FIELD_NAME", "csrf_token"), None)  # so this page gets a new CSRF token


def page(template: str, status: int = 200, **values: Any) -> tuple[str, int]:
    """Render a page; the header knows who is signed in (looked up once per request)."""
    if "viewer" not in g and SESSION_KEY in session:
        with unit_of_work() as db_session:
            viewer(db_session)
    return render_template(template, **values), status
