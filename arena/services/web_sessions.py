"""Page sign-ins kept on the server. The browser's session cookie carries a random key; the database
keeps the key's SHA-256 with the account and an expiry. Signing out deletes the row, so a copied cookie
stops working with it, and nothing in the cookie names the account or its token."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from arena.storage.models import Account, WebSession, utcnow

KEY_BYTES = 32  # 256 random bits: a key cannot be guessed, so the row needs no other secret


def _key_hash(key: str) -> str:
    return hashlib.sha256(key.encode("ascii", "replace")).hexdigest()


def open_session(session: Session, account: Account, lifetime: timedelta) -> str:
    """A new key for ``account``, valid for ``lifetime`` (returned once, stored hashed); expired rows of
    every account are swept here, so the table holds live sign-ins only."""
    now = utcnow()
    session.execute(delete(WebSession).where(WebSession.expires_at <= now))
    key = secrets.token_urlsafe(KEY_BYTES)
    session.add(WebSession(key_hash=_key_hash(key), account_id=account.id, created_at=now,
                           expires_at=now + lifetime))
    return key


def session_account(session: Session, key: object) -> Account | None:
    """The account signed in with ``key``, or None when the key is unknown, revoked or expired."""
    if not isinstance(key, str) or not 16 <= len(key) <= 128:
        return None
    return session.scalar(select(Account).join(WebSession, WebSession.account_id == Account.id)
                          .where(WebSession.key_hash == _key_hash(key), WebSession.expires_at > utcnow()))


def close_session(session: Session, key: object) -> None:
    """Sign the key out (revokes every copy of its cookie); an unknown key is a no-op."""
    if isinstance(key, str):
        session.execute(delete(WebSession).where(WebSession.key_hash == _key_hash(key)))
