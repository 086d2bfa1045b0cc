"""Commit-reveal records that let anyone check, after a match, that simultaneous choices were fixed
before any of them was revealed.

For every committed choice the referee records ``sha256(salt || canonical_json([turn, seat, action]))``
before applying the step; the per-match salt stays secret until the match is over, then is published
in the replay. Recomputing every commitment from the replay proves the recorded actions are the ones
committed at the time.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from typing import Any

SCHEME = "sha256(hex salt + canonical JSON [turn, seat, action])"


def new_salt() -> str:
    """32 hex characters from the OS's secure random source; never derived from the seed."""
    return secrets.token_hex(16)


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)  # what json.dumps
# would build anew on every call (half its time for a small action): one commitment per decision


def canonical_json(value: Any) -> str:
    return _CANONICAL.encode(value)


def commitment(salt: str, turn: int, seat: int, action: Any) -> str:
    payload = salt + canonical_json([turn, seat, action])
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def verify(salt: str, turn: int, seat: int, action: Any, recorded: str) -> bool:
    return secrets.compare_digest(commitment(salt, turn, seat, action), recorded)
