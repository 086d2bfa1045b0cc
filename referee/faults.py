"""Every way a bot can misbehave, as one enum, and the record kept of each fault."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any

EXCERPT_CHARS = 200


class FaultKind(StrEnum):
    TIMEOUT = "timeout"  # no complete answer within the deadline (also: dripping too slowly)
    CONNECTION = "connection_error"  # refused, reset, closed mid-body, unresolvable
    HTTP_STATUS = "http_status"  # any status other than 2xx (redirects are never followed)
    TOO_LARGE = "too_large"  # the body exceeded the response size cap
    BAD_JSON = "bad_json"  # the body is not JSON
    WRONG_SHAPE = "wrong_shape"  # JSON, but not {"action": ...}
    WRONG_TURN = "wrong_turn"  # the answer names another turn than the one asked
    ILLEGAL = "illegal_action"  # a well-formed action the rules do not allow now
    UNSAFE_URL = "unsafe_url"  # the URL guard refused the address before connecting


@dataclass(frozen=True)
class Fault:
    """One recorded fault: what went wrong, how long it took, and a short excerpt of the evidence."""

    kind: FaultKind
    message: str
    latency_ms: float
    excerpt: str = ""

    def __post_init__(self) -> None:
        # Part of a message may be the bot's (the status line http.client refused, a wrong "turn" quoted):
        # printable, as an excerpt is (not cut here: the bot's host at its end must stay whole to be
        # blanked). Regression: a NUL in a status line reached the faults table, which PostgreSQL refuses,
        # and the match could not be recorded.
        object.__setattr__(self, "message", printable(self.message.strip(), len(self.message)))

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["kind"] = str(self.kind)
        data["latency_ms"] = round(self.latency_ms, 3)
        return data


def excerpt(data: bytes | str | None) -> str:
    """A short, printable excerpt of what a bot sent."""
    if data is None:
        return ""
    return printable(data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data, EXCERPT_CHARS)


def printable(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, every character that does not print (NUL, a line break, a
    lone surrogate) shown as U+FFFD."""
    text = "".join(ch if ch.isprintable() else "\ufffd" for ch in text[: limit + 1])
    return text if len(text) <= limit else text[:limit] + "…"
