"""The checklist ``arena check`` prints and the health check refuses with: one line per check, and for
each failure a fix in plain words.

A line names the problem's kind (fault kind, HTTP status, schema rule, timing) and never quotes what
the bot sent: the same lines go into the API's 422, where a user could otherwise aim the check at a
service the arena can reach and read its answers back."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from referee.bot_client import HELD, Reply
from referee.faults import FaultKind


class Status(StrEnum):
    PASS = "pass"
    WARN = "warn"  # works, but costs the bot time or safety; never a fault in a match
    FAIL = "fail"  # the bot would fault (or forfeit) in a match
    SKIP = "skip"


@dataclass(frozen=True)
class CheckItem:
    """One line of the checklist."""

    name: str
    status: Status
    detail: str
    fix: str = ""

    def line(self) -> str:
        text = f"{self.status.upper():4}  {self.name}: {self.detail}"
        return f"{text}\n      fix: {self.fix}" if self.fix else text

    def problem(self) -> str:
        """The one-line form the health check and the API use."""
        return f"{self.name}: {self.detail}" + (f" - fix: {self.fix}" if self.fix else "")


@dataclass
class CheckReport:
    """Everything ``check_protocol`` found, in the order it was checked."""

    items: list[CheckItem] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)
    latency_ms: dict[str, float] = field(default_factory=dict)
    elapsed_s: float = 0.0

    @property
    def ok(self) -> bool:
        """True unless the bot would fault in a match (warnings do not count)."""
        return not any(item.status == Status.FAIL for item in self.items)

    def add(self, name: str, status: Status, detail: str, fix: str = "") -> None:
        self.items.append(CheckItem(name, status, detail, fix))

    def problems(self) -> list[str]:
        return [item.problem() for item in self.items if item.status == Status.FAIL]

    def warnings(self) -> list[str]:
        return [item.problem() for item in self.items if item.status == Status.WARN]

    def text(self) -> str:
        counts = {status: sum(item.status == status for item in self.items) for status in Status}
        verdict = "the bot is ready to play" if self.ok else "the bot would fault in a match"
        summary = (f"{counts[Status.PASS]} passed, {counts[Status.FAIL]} failed, {counts[Status.WARN]} warnings, "
                   f"{counts[Status.SKIP]} skipped in {_seconds(self.elapsed_s)}: {verdict}")
        return "\n".join([*(item.line() for item in self.items), summary])


def _seconds(elapsed_s: float) -> str:
    """A fast bot is checked in hundredths of a second: "0.0 s" read as if nothing had been checked."""
    return f"{elapsed_s:.1f} s" if elapsed_s >= 1 else f"{elapsed_s * 1000:.0f} ms"


_STATUS_FIXES = {
    401: "the bot refused a correctly signed request: start it with the secret the arena gave you, and compare "
         "'sha256=' + hex HMAC-SHA256 of the exact body bytes (before any JSON parsing) with X-Arena-Signature",
    403: "the bot refused a correctly signed request: start it with the secret the arena gave you, and compare "
         "'sha256=' + hex HMAC-SHA256 of the exact body bytes (before any JSON parsing) with X-Arena-Signature",
    404: "serve GET /, POST /start, /act and /end at the root of the URL you submitted",
    405: "serve GET /, POST /start, /act and /end at the root of the URL you submitted",
    409: "the bot refused a fresh turn as stale: remember the last turn per match and seat, and refuse only a turn "
         "that is not newer than it",
    413: "accept request bodies of a few hundred KiB at least: the views and legal_actions can be long",
}


ADMISSION_SIGNATURE_FIX = ("the bot checks signatures: start it without a secret first (a new bot learns its secret "
                           "only once it is registered), or give it the secret the arena showed for this bot "
                           "(rotate it on the My bots page if it is lost)")


def fault_fix(reply: Reply, path: str, decision_ms: int, max_bytes: int, signed: bool = True,
              admission: bool = False) -> str:
    """What to change in the bot so this fault goes away, in the bot author's words. ``signed``: the
    request carried a signature under a secret (False: the check was run without one). ``admission``:
    a health check, signed with a secret the bot may not have been given yet."""
    fault = reply.fault
    assert fault is not None
    if fault.kind == FaultKind.HTTP_STATUS:
        status = reply.status or 0
        if status in (401, 403) and not signed:
            return "the bot wants signed requests: run the check with --secret S, S being the secret the bot has"
        if status in (401, 403) and admission:
            return ADMISSION_SIGNATURE_FIX
        if status in _STATUS_FIXES:
            return _STATUS_FIXES[status]
        if 300 <= status < 400:
            return "redirects are never followed: submit the final URL (https:// if the bot redirects to it)"
        if status >= 500:
            return f"the bot crashed while answering {path}: read its log, the error is on its side"
        return f"answer {path} with a 2xx status"
    fixes = {
        FaultKind.TIMEOUT: f"answer within the limit ({decision_ms} ms for /act): keep the search under it, and serve "
                           "requests concurrently (several seats are asked at once on separate connections)",
        FaultKind.CONNECTION: "the arena could not talk to the bot: is it running and listening on that host and port "
                              "(bind 0.0.0.0 to be reachable from outside), and does it answer HTTP/1.1, not HTTPS "
                              "on an http:// URL or the reverse?",
        FaultKind.TOO_LARGE: f"answer under {max_bytes} bytes: send only {{\"action\": ...}}",
        FaultKind.BAD_JSON: "answer a JSON body (Content-Type: application/json); GET / and /act never answer "
                            "empty",
        FaultKind.WRONG_SHAPE: 'answer a JSON object {"action": <one of legal_actions>}',
        FaultKind.WRONG_TURN: 'echo the "turn" you were asked, or leave "turn" out of the answer',
        FaultKind.ILLEGAL: "answer one of legal_actions exactly as it was given (same JSON: strings stay strings, "
                           "lists stay lists)",
        FaultKind.UNSAFE_URL: "the arena only calls public addresses: host the bot on a public IP or name",
    }
    return fixes.get(fault.kind, "see docs/protocol.md")


_ANSWER_FAULTS = {
    FaultKind.WRONG_SHAPE: 'the answer is JSON but not an object with "action"',
    FaultKind.WRONG_TURN: "the answer names another turn than the one asked",
    FaultKind.ILLEGAL: "an illegal action (not one of legal_actions)",
}


_CONNECTION_WORDS = (  # what the transport's message names (exception type) -> what happened, in words
    ("ConnectionRefused", "connection refused at the bot's address: nothing listens on that host and port"),
    ("ResolveTimeout", "the bot's host name took too long to resolve"),
    ("ResolveFailed", "the bot's host name does not resolve to an address"),
    ("gaierror", "the bot's host name does not resolve to an address"),
    ("ConnectionReset", "the bot's side reset the connection"),
    ("RemoteDisconnected", "the bot closed the connection without answering"),
    ("IncompleteRead", "the bot closed the connection in the middle of its answer"),
    ("SSL", "the TLS handshake failed (https:// to a plain HTTP bot, or the reverse?)"),
    ("BadStatusLine", "the answer is not HTTP (https:// expected, or another protocol on that port?)"),
    ("NoRoute", "no route to the bot's address"),
    ("Unreachable", "no route to the bot's address"),
)


def connection_words(message: str) -> str:
    """A connection fault in words; the arena's own classification, never the bot's text."""
    for marker, words in _CONNECTION_WORDS:
        if marker in message:
            return words
    return "the arena could not hold a connection to the bot's address"


def fault_detail(reply: Reply) -> str:
    """The fault's kind and status code, with what happened in words; the guard's own message for a
    refused address (it quotes the arena's rule, not the bot)."""
    fault = reply.fault
    assert fault is not None
    if fault.kind == FaultKind.UNSAFE_URL:
        return f"{fault.kind}: {fault.message}"
    if fault.kind in _ANSWER_FAULTS:
        return f"{fault.kind}: {_ANSWER_FAULTS[fault.kind]}"
    if fault.kind == FaultKind.CONNECTION:
        return f"{fault.kind}: {connection_words(fault.message)}"
    status = f" (HTTP {reply.status})" if reply.status is not None else ""
    if fault.kind == FaultKind.TIMEOUT and fault.message == HELD:
        return f"{fault.kind} after {fault.latency_ms:.0f} ms: {HELD}"
    if fault.kind == FaultKind.TIMEOUT:
        return f"{fault.kind} after {fault.latency_ms:.0f} ms: no complete answer within the time limit"
    if fault.kind == FaultKind.HTTP_STATUS and reply.status in (401, 403):
        return f"{fault.kind}{status}: answered {reply.status}, the bot refused the arena's signed request"
    if fault.kind == FaultKind.HTTP_STATUS:
        return f"{fault.kind}{status}: answered {reply.status} instead of 2xx"
    if fault.kind == FaultKind.BAD_JSON:
        return f"{fault.kind}{status}: the answer is not JSON"
    if fault.kind == FaultKind.TOO_LARGE:
        return f"{fault.kind}{status}: the answer is larger than the arena accepts"
    return f"{fault.kind}{status}"
