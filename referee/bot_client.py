"""One bot seat's HTTP client: signed requests, a hard deadline, a response size cap, no redirects.

``start_call`` hands the request to a worker thread and returns at once, so the referee can ask
several seats concurrently; ``PendingCall.wait`` returns by the call's deadline whatever the bot does
(silent, slow, dripping, huge, garbage): nothing a bot sends raises out of here. That path opens new
connections (and carries TLS); calls on a kept-alive plain connection go through ``referee.multiplex``,
which shares this module's judgement of an answer (``status_fault``, ``complete_reply``) and its
wording of every fault (``timeout_fault``, ``too_large``, ``connection_message``...).
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from concurrent.futures import Executor, Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any

from referee import protocol
from referee.bot_transport import (
    DNS_TIMEOUT_S,
    AddressGuard,
    BotConnection,
    CallCut,
    ConnectionTracker,
    Resolver,
    ResolveTimeout,
    resolve,
)
from referee.errors import UnsafeURL
from referee.faults import Fault, FaultKind, excerpt
from referee.url_guard import check_url_shape
from referee.watchdog import Watchdog

CHUNK = 16 * 1024


@dataclass(frozen=True)
class Reply:
    """What came back: parsed JSON, or the fault that prevented it."""

    data: Any
    latency_ms: float
    fault: Fault | None = None
    status: int | None = None
    headers_ms: float | None = None  # when the status line and headers were in (Nagle stalls show here)
    body_bytes: int | None = None

    def with_headers_ms(self, headers_ms: float | None) -> Reply:
        """This reply with ``headers_ms`` set, unless it has it already or there is none to set (both transport
        paths: a fault decided after the head came in gets its time here). A complete answer's reply is built with
        it at once (``complete_reply``): a frozen dataclass's fields cost a call each, and this ran on every call
        of the hot path (``dataclasses.replace`` costs several times more still)."""
        if headers_ms is None or self.headers_ms is not None:
            return self
        return Reply(self.data, self.latency_ms, self.fault, self.status, headers_ms, self.body_bytes)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)  # what json.loads would build for every answer


MAX_DEPTH = 32  # an answer's deepest legitimate nesting is a few levels (a Pajarracos action: 3)


def parse_json(body: bytes) -> Any:
    """Strict JSON: no NaN/Infinity; deep nesting and giant numbers are errors, not crashes. Nesting
    deeper than ``MAX_DEPTH`` is refused here (ValueError): the parser takes ~1,000 levels on the fresh
    stack of the thread that reads an answer, and quoting such a value on the referee's deeper stack
    (a fault's excerpt) raised RecursionError and crashed the match."""
    value = _DECODER.decode(body.decode("utf-8"))
    if body.count(b"[") + body.count(b"{") > MAX_DEPTH and _deeper_than(value, MAX_DEPTH):
        raise ValueError(f"nested more than {MAX_DEPTH} levels deep")
    return value


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` nests lists and objects more than ``limit`` deep (walked without recursion)."""
    stack = [(value, 1)] if isinstance(value, dict | list) else []
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


class BotClient:
    """Talks to one bot for one seat over one kept-alive connection."""

    def __init__(
        self,
        url: str,
        secret: str = "",
        max_response_bytes: int = 64 * 1024,
        guard: AddressGuard | None = None,
        resolver: Resolver = resolve,
        dns_timeout_s: float = DNS_TIMEOUT_S,
        kept: socket.socket | None = None,
    ) -> None:
        """``kept``: an idle connection to this URL from an earlier match (``referee.connection_keeper``)."""
        self.url = check_url_shape(url)
        self.secret = secret
        self.max_response_bytes = max_response_bytes
        self.tracker = ConnectionTracker()
        self.session = BotConnection(self.url, self.tracker, guard, resolver, dns_timeout_s, kept=kept)
        self._busy = threading.Lock()  # one request at a time on this seat's connection

    def close(self) -> None:
        self.tracker.abort()
        self.session.close()

    def detach(self) -> socket.socket | None:
        """This seat's connection, idle after a complete answer, for a later match; None when there is none
        or a call (one given up on) still holds it. The client is closed afterwards as usual."""
        if not self.hold():
            return None
        try:
            return self.session.detach()
        finally:
            self.unhold()

    def hold(self) -> bool:
        """Take this seat's connection for a call made elsewhere (``referee.multiplex``); False when a
        call still holds it."""
        return self._busy.acquire(blocking=False)

    def unhold(self) -> None:
        self._busy.release()

    def start_call(
        self, pool: Executor, method: str, path: str, body: bytes | None, headers: dict[str, str], budget_s: float,
        empty_ok: bool = False,
    ) -> PendingCall:
        started = time.perf_counter()
        deadline = started + max(budget_s, 0.0)
        cut = CallCut(self.tracker)
        future = pool.submit(self._perform, method, path, body, headers, deadline, empty_ok, cut)
        return PendingCall(self, future, started, deadline, cut)

    def call(self, watchdog: Watchdog, method: str, path: str, body: bytes | None, headers: dict[str, str],
             budget_s: float, empty_ok: bool = False) -> Reply:
        """Make the call in this thread; the watchdog cuts the connection at the deadline. ``empty_ok``:
        an empty 2xx body is a fine answer (``/start`` and ``/end``), with ``data`` None."""
        started = time.perf_counter()
        deadline = started + max(budget_s, 0.0)
        cut = CallCut(self.tracker)
        entry = watchdog.arm(deadline, cut)
        try:
            return self._perform(method, path, body, headers, deadline, empty_ok, cut)
        finally:
            watchdog.disarm(entry)

    def signed_headers(self, match_id: str, turn: int, body: bytes) -> dict[str, str]:
        return protocol.headers(match_id, turn, self.secret, body)

    # -- runs in a worker thread -------------------------------------------------------------------
    def _perform(self, method: str, path: str, body: bytes | None, headers: dict[str, str], deadline: float,
                 empty_ok: bool = False, cut: CallCut | None = None) -> Reply:
        # bounded: an earlier call of this seat, given up on, may not have let go of it yet
        waiting = time.perf_counter()
        if not self._busy.acquire(timeout=max(deadline - waiting, 0.0)):
            return held_fault(waiting)
        try:
            t0 = time.perf_counter()
            try:
                return self._exchange(method, path, body, headers, t0, deadline, empty_ok, cut)
            except Exception as exc:  # the last line of defence: a bot can never crash the referee
                return unexpected_fault(exc, t0)
            finally:
                self.tracker.finished()
        finally:
            self._busy.release()

    def _exchange(self, method: str, path: str, body: bytes | None, headers: dict[str, str], t0: float,
                  deadline: float, empty_ok: bool, cut: CallCut | None) -> Reply:
        remaining = deadline - t0
        if remaining <= 0:
            return no_time_fault(t0)
        try:
            response = self.session.request(method, path, body, headers, remaining, cut)
        except UnsafeURL as exc:
            return _fault(FaultKind.UNSAFE_URL, str(exc), t0)
        except ResolveTimeout:
            return _fault(FaultKind.TIMEOUT, "name resolution of the bot's host did not finish in time", t0)
        except Exception as exc:  # OSError, http.client.HTTPException and whatever a bad answer raises
            return self.network_fault(exc, t0, deadline)
        headers_ms = (time.perf_counter() - t0) * 1000
        complete = False
        try:
            reply, complete = self._read(response, t0, deadline, empty_ok, headers_ms)
            return reply.with_headers_ms(headers_ms)
        finally:
            self.session.release(response, complete)

    def _read(self, response: http.client.HTTPResponse, t0: float, deadline: float,
              empty_ok: bool, headers_ms: float) -> tuple[Reply, bool]:
        """The reply, and whether the answer was read whole (so the connection may be kept). ``headers_ms``:
        when the head was in, for a complete answer's reply (``complete_reply``)."""
        status = response.status
        try:
            if not 200 <= status < 300:
                try:
                    head = response.read(200) if status < 300 or status >= 400 else b""
                except http.client.IncompleteRead as exc:  # a status fault all the same, as on the other path
                    return status_fault(status, response.getheader("Location"), t0, exc.partial), False
                # kept when that read the whole (small) answer: a 401 or 409 need not cost a new connection
                return status_fault(status, response.getheader("Location"), t0, head), True
            declared = response.getheader("Content-Length")
            if declared is not None and declared.isdigit() and int(declared) > self.max_response_bytes:
                return declared_too_large(declared, self.max_response_bytes, t0, status), False
            data = bytearray()
            while chunk := response.read(CHUNK):
                data += chunk
                if len(data) > self.max_response_bytes:
                    return too_large(self.max_response_bytes, t0, bytes(data[:200]), status), False
            if response.length:  # http.client returns a body cut short by EOF without complaint
                raise http.client.IncompleteRead(bytes(data[:200]), response.length)
        except Exception as exc:  # OSError, http.client.HTTPException (IncompleteRead, bad chunks, ...)
            return self.network_fault(exc, t0, deadline), False
        return complete_reply(status, data, t0, deadline, empty_ok, headers_ms)

    def network_fault(self, exc: BaseException, t0: float, deadline: float) -> Reply:
        if time.perf_counter() >= deadline or isinstance(exc, TimeoutError):
            return timeout_fault(t0)
        return _fault(FaultKind.CONNECTION, connection_message(exc, self.session.host_header), t0)


class PendingCall:
    """A call in flight; ``wait`` returns by its deadline, cutting the connection if it must."""

    def __init__(self, client: BotClient, future: Future[Reply], started: float, deadline: float,
                 cut: CallCut) -> None:
        self.client = client
        self.future = future
        self.started = started
        self.deadline = deadline
        self.cut = cut  # what a watchdog arms to cut this call (and only this call) at its deadline

    def wait(self) -> Reply:
        try:
            return self.future.result(timeout=max(self.deadline - time.perf_counter(), 0.0))
        except FutureTimeout:
            self.cut.abort()
            self.future.cancel()
            return timeout_fault(self.started)


def _fault(kind: FaultKind, message: str, t0: float, evidence: bytes | None = None,
           status: int | None = None) -> Reply:
    latency_ms = (time.perf_counter() - t0) * 1000
    return Reply(None, latency_ms, Fault(kind, message, latency_ms, excerpt(evidence)), status)


# One wording per fault, for both transport paths (this module's threads and ``referee.multiplex``): a bot's
# owner reads the same message for the same misbehaviour whichever path carried the call.
def timeout_fault(t0: float) -> Reply:
    return _fault(FaultKind.TIMEOUT, "no complete answer before the deadline", t0)


HELD = "not sent: the bot's previous request, given up on, still held the connection"


def held_fault(t0: float) -> Reply:
    return _fault(FaultKind.TIMEOUT, HELD, t0)


def no_time_fault(t0: float) -> Reply:
    return _fault(FaultKind.TIMEOUT, "no time left for this call", t0)


def declared_too_large(declared: str, cap: int, t0: float, status: int) -> Reply:
    return _fault(FaultKind.TOO_LARGE, f"declared {declared} bytes, cap {cap}", t0, status=status)


def too_large(cap: int, t0: float, evidence: bytes, status: int) -> Reply:
    return _fault(FaultKind.TOO_LARGE, f"more than {cap} bytes", t0, evidence, status)


def unexpected_fault(exc: BaseException, t0: float) -> Reply:
    return _fault(FaultKind.CONNECTION, f"unexpected failure: {exc!r}", t0)


def connection_message(exc: BaseException, host: str) -> str:
    """A connection fault in words, naming the bot's host as urllib3's messages did (the arena blanks it
    before anything is shown). An answer cut short says how much was still due, never how much was read:
    that count is the transport's (http.client's current read here, the last 200 bytes kept by
    ``referee.http_wire``), so the two paths wrote 4096 and 200 for the same answer."""
    if isinstance(exc, http.client.IncompleteRead):
        due = f", {exc.expected} more bytes expected" if exc.expected else ""
        return f"IncompleteRead: the connection closed in the middle of the answer{due} (talking to {host})"
    return _short(exc, f" (talking to {host})")


def status_fault(status: int, location: str | None, t0: float, head: bytes) -> Reply:
    """A status other than 2xx: a fault, and a redirect is named, never followed."""
    note = f" (redirect to {location!r} not followed)" if location else ""
    return _fault(FaultKind.HTTP_STATUS, f"HTTP {status}{note}", t0, head, status)


def complete_reply(status: int, data: bytearray, t0: float, deadline: float, empty_ok: bool,
                   headers_ms: float | None = None) -> tuple[Reply, bool]:
    """The reply for a complete 2xx body, and whether the connection may be kept. ``headers_ms``: when the
    head was in, given here so the reply is built once (``Reply.with_headers_ms`` builds it again)."""
    now = time.perf_counter()
    latency_ms = (now - t0) * 1000
    if now > deadline:
        return Reply(None, latency_ms, Fault(FaultKind.TIMEOUT, "answer completed after the deadline",
                                             latency_ms, excerpt(bytes(data))), status, headers_ms), False
    if empty_ok and not data.strip():
        return Reply(None, latency_ms, None, status, headers_ms, len(data)), True
    try:
        parsed = parse_json(bytes(data))
    except (ValueError, RecursionError) as exc:
        return Reply(None, latency_ms, Fault(FaultKind.BAD_JSON, f"not JSON: {exc}"[:300], latency_ms,
                                             excerpt(bytes(data))), status, headers_ms), True
    return Reply(parsed, latency_ms, None, status, headers_ms, len(data)), True


def _short(exc: BaseException, suffix: str = "") -> str:
    text = f"{type(exc).__name__}: {exc}"
    return (text if len(text) <= 300 else text[:300] + "…") + suffix


@dataclass(frozen=True)
class Call:
    """One request to make to one seat's bot."""

    client: BotClient
    method: str
    path: str
    body: bytes | None
    headers: dict[str, str]
    budget_s: float
    empty_ok: bool = False  # an empty 2xx body is a fine answer (/start, /end)
