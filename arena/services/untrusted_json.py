"""JSON from outside (API bodies, the tournament form's game parameters), parsed and checked before any
service sees it. Python's parser recurses once per nesting level (a body of 100,000 ``[`` raised
RecursionError, a 500), and accepts what no column or client can take back: NaN and Infinity (and
1e400 = inf), lone surrogates (``"\\ud800"``: no UTF-8 database driver can encode one) and NUL
(PostgreSQL text cannot hold it). Each is refused here as ``Invalid`` (422)."""

from __future__ import annotations

import json
import math
from typing import Any

from arena.services.errors import Invalid

MAX_DEPTH = 32  # the deepest legitimate document (game parameters) is 3 levels deep


def parse_json(text: str | bytes) -> Any:
    """The value of ``text``, checked by ``check_json``; ``Invalid`` with the parser's reason otherwise."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise Invalid(f"JSON nested more than {MAX_DEPTH} levels deep is not accepted") from None
    except ValueError as exc:  # includes undecodable bytes and integers of more than 4300 digits
        raise Invalid(f"not valid JSON: {exc}") from None
    check_json(value)
    return value


def check_json(value: Any) -> None:
    """``Invalid`` for nesting deeper than ``MAX_DEPTH``, a non-finite number, or text with a lone
    surrogate or NUL. Iterative, so no input can exhaust the stack."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > MAX_DEPTH:
                raise Invalid(f"JSON nested more than {MAX_DEPTH} levels deep is not accepted")
            if isinstance(item, dict):
                for key in item:
                    _check_text(key)
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
        elif isinstance(item, float) and not math.isfinite(item):
            raise Invalid("standard JSON only: NaN, Infinity and numbers out of range are not allowed")
        elif isinstance(item, str):
            _check_text(item)


def _check_text(text: str) -> None:
    if "\x00" in text:
        raise Invalid("text may not contain NUL (\\u0000): PostgreSQL stores no such control characters")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise Invalid("text must be valid Unicode: a lone surrogate (\\ud800-\\udfff) is not a character") from None
