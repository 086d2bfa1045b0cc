"""Small helpers for the service tests."""

from __future__ import annotations

from arena.composition import Context
from arena.services.accounts import create_account


def token_for(context: Context, name: str, admin: bool = False) -> str:
    with context.db.session() as session:
        _account, token = create_account(session, name, admin=admin)
    return token


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}
