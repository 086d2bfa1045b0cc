"""Sign-up: ``POST /api/accounts`` answers the account's token once."""

from __future__ import annotations

from flask import jsonify

from arena.services.accounts import create_account
from arena.services.errors import Forbidden
from arena.web.api import api
from arena.web.api.common import json_body
from arena.web.api.openapi import ACCOUNT_CREATE
from arena.web.context import context, unit_of_work
from arena.web.ratelimit import signup_limit


@api.post("/accounts")
@signup_limit
def sign_up():  # type: ignore[no-untyped-def]
    if not context().settings.open_signup:
        raise Forbidden("open sign-up is switched off; ask an organizer for a token")
    body = json_body(ACCOUNT_CREATE)
    with unit_of_work() as session:
        account, token = create_account(session, body["name"])
        data = {"id": account.id, "name": account.name, "token": token, "is_admin": account.is_admin}
    return jsonify(data), 201
