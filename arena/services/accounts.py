"""Accounts and their API tokens. Only a token's SHA-256 is stored; the token is shown once."""

from __future__ import annotations

import hashlib
import re
import secrets

from sqlalchemy import select
from sqlalchemy.orm import Session

from arena.services.errors import Conflict, Invalid
from arena.storage.models import Account  # the web layer takes the type from here

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{1,39}$")
TOKEN_PREFIX = "arena_"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def create_account(session: Session, name: str, admin: bool = False) -> tuple[Account, str]:
    """A new account and its token (returned once, never stored in clear)."""
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise Invalid("name must be 2-40 characters: letters, digits, '_', '.', '-', starting with a letter or digit")
    if session.scalar(select(Account.id).where(Account.name == name)) is not None:
        raise Conflict(f"the name {name!r} is taken")
    token = _new_token()
    account = Account(name=name, token_hash=hash_token(token), is_admin=admin)
    session.add(account)
    session.flush()
    return account, token


def issue_token(session: Session, account: Account) -> str:
    """A new token for the account, returned once; the one it had stops working. The sign-up page issues
    the token on the page that shows it, so that it never waits anywhere (a cookie, a store) in between."""
    token = _new_token()
    account.token_hash = hash_token(token)
    session.flush()
    return token


def _new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def authenticate(session: Session, token: str | None) -> Account | None:
    if not token or not token.startswith(TOKEN_PREFIX) or len(token) > 200:
        return None
    return session.scalar(select(Account).where(Account.token_hash == hash_token(token)))
