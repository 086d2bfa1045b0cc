"""What every API view needs: the context, the caller's account, the JSON body, validation."""

from __future__ import annotations

from typing import Any

import jsonschema
from flask import request
from sqlalchemy.orm import Session

from arena.services.accounts import Account, authenticate
from arena.services.errors import Invalid, Unauthorized
from arena.services.untrusted_json import parse_json
from arena.web.identity import bearer_token


def current_account(session: Session, required: bool = True) -> Account | None:
    account = authenticate(session, bearer_token())
    if account is None and required:
        raise Unauthorized("a valid API token is required: send 'Authorization: Bearer <token>'")
    return account


def json_body(schema: dict[str, Any] | None = None) -> dict[str, Any]:
    """The request's JSON object, checked (``arena.services.untrusted_json``) and validated against
    ``schema`` when given; always ``Invalid`` (422) for a body that is not one, never a 500."""
    if not request.is_json:
        raise Invalid("the body must be a JSON object (Content-Type: application/json)")
    data = parse_json(request.get_data(cache=True))
    if not isinstance(data, dict):
        raise Invalid("the body must be a JSON object (Content-Type: application/json)")
    if schema is not None:
        try:
            jsonschema.validate(data, schema)
        except jsonschema.ValidationError as exc:
            where = "/".join(str(p) for p in exc.absolute_path) or "body"
            raise Invalid(f"{where}: {exc.message}") from None
    return data


def int_arg(name: str, default: int | None = None, low: int = 0, high: int = 10**9) -> int | None:
    raw = request.args.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise Invalid(f"query parameter {name} must be an integer") from None
    if not low <= value <= high:
        raise Invalid(f"query parameter {name} must be from {low} to {high}")
    return value
