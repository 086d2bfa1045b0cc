"""Bot protocol v1: the bodies the referee sends, their signature, and the JSON Schemas.

A bot is a base URL answering ``GET /`` (identity), ``POST /start``, ``POST /act`` and ``POST /end``.
Every request carries ``X-Arena-Match``, ``X-Arena-Turn`` and ``X-Arena-Signature`` (``sha256=`` and
the hex HMAC-SHA256 of the exact body bytes under the bot's secret). See docs/protocol.md.
"""

from __future__ import annotations

import hmac
import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import orjson

PROTOCOL_VERSION = 1
API_VERSION = "1"
SIGNATURE_HEADER = "X-Arena-Signature"
MATCH_HEADER = "X-Arena-Match"
TURN_HEADER = "X-Arena-Turn"
SCHEMA_NAMES = ("bot_info", "start", "act", "act_response", "end", "replay")


@dataclass(frozen=True)
class TimeControls:
    """Per-decision limit plus an optional bank that overruns draw down (Kaggle style)."""

    decision_ms: int = 1000
    time_bank_ms: int = 0
    start_ms: int = 5000  # /start and /end get this long
    strike_limit: int = 3  # faults before the bot forfeits; 0 = never
    max_response_bytes: int = 64 * 1024

    def to_json(self) -> dict[str, int]:
        return {
            "decision_ms": self.decision_ms,
            "time_bank_ms": self.time_bank_ms,
            "start_ms": self.start_ms,
            "strike_limit": self.strike_limit,
            "max_response_bytes": self.max_response_bytes,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TimeControls:
        return cls(**{k: int(v) for k, v in data.items() if k in cls.__dataclass_fields__})


def encode(body: dict[str, Any]) -> bytes:
    """The exact bytes sent: compact JSON, UTF-8. orjson writes the same bytes as the standard library
    for every body the games produce, several times faster (this runs once per call on the referee's
    hot path); a value it refuses (an integer beyond 64 bits, say) takes the standard library's path."""
    try:
        return orjson.dumps(body, option=orjson.OPT_NON_STR_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def sign(secret: str, body: bytes) -> str:
    """The ``X-Arena-Signature`` value for ``body``. ``hmac.digest`` is OpenSSL's one-shot HMAC: the
    same bytes as ``hmac.new(...).hexdigest()`` without building two hash objects in Python (once per
    call on the referee's hot path)."""
    return "sha256=" + hmac.digest(secret.encode("utf-8"), body, "sha256").hex()


def verify_signature(secret: str, body: bytes, header: str | None) -> bool:
    """Constant-time check of a signature header (what a bot's server does)."""
    return header is not None and hmac.compare_digest(sign(secret, body), header)


def headers(match_id: str, turn: int, secret: str, body: bytes) -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        MATCH_HEADER: match_id,
        TURN_HEADER: str(turn),
        SIGNATURE_HEADER: sign(secret, body),
    }


def start_body(match_id: str, game: str, params: dict, seat: int, players: list[dict], tc: TimeControls) -> dict:
    return {
        "protocol": PROTOCOL_VERSION,
        "match_id": match_id,
        "game": game,
        "params": params,
        "seat": seat,
        "players": players,
        "time_controls": tc.to_json(),
    }


def act_body(
    match_id: str,
    game: str,
    seat: int,
    turn: int,
    decision: str,
    deadline_ms: int,
    time_bank_ms: int,
    view: dict,
    legal_actions: list,
    last_latency_ms: float | None,
) -> dict:
    return {
        "protocol": PROTOCOL_VERSION,
        "match_id": match_id,
        "game": game,
        "seat": seat,
        "turn": turn,
        "decision": decision,
        "deadline_ms": deadline_ms,
        "time_bank_ms": time_bank_ms,
        "view": view,
        "legal_actions": legal_actions,
        "last_latency_ms": None if last_latency_ms is None else round(last_latency_ms, 3),
    }


def end_body(match_id: str, game: str, seat: int, result: dict, forfeited: list[int]) -> dict:
    return {
        "protocol": PROTOCOL_VERSION,
        "match_id": match_id,
        "game": game,
        "seat": seat,
        "result": result,
        "rank": result["ranks"][seat],
        "forfeited": forfeited,
    }


@cache
def schema(name: str) -> dict[str, Any]:
    """One of the JSON Schemas in ``referee/schemas/`` (documented in docs/protocol.md)."""
    if name not in SCHEMA_NAMES:
        raise KeyError(f"no schema {name!r}; known: {SCHEMA_NAMES}")
    text = resources.files("referee.schemas").joinpath(f"{name}.json").read_text(encoding="utf-8")
    return json.loads(text)


def view_schema(game: str) -> dict[str, Any]:
    """The JSON Schema of a game's views; the three Piranha Pedro games share one."""
    family = "piranha-pedro" if game.startswith("piranha-pedro") else game
    path = resources.files("referee.schemas").joinpath("views", f"{family}.json")
    return json.loads(path.read_text(encoding="utf-8"))
