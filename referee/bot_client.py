"""One bot seat's HTTP client: signed requests, a hard deadline, a response size cap, no redirects.

``start_call`` hands the request to a worker thread and returns at once, so the referee can ask
several seats concurrently; ``PendingCall.wait`` returns by the call's deadline whatever the bot does
(silent, slow, dripping, huge, garbage): nothing a bot sends raises out of here.
"""

from __future__ import annotations

import dataclasses
import http.client
import json
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


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)  # what json.loads would build for every answer


def parse_json(body: bytes) -> Any:
    """Strict JSON: no NaN/Infinity; deep nesting and giant numbers are errors, not crashes."""
    return _DECODER.decode(body.decode("utf-8"))


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
    ) -> None:
        self.url = check_url_shape(url)
        self.secret = secret
        self.max_response_bytes = max_response_bytes
        self.tracker = ConnectionTracker()
        self.session = BotConnection(self.url, self.tracker, guard, resolver, dns_timeout_s)
        self._busy = threading.Lock()  # one request at a time on this seat's connection

    def close(self) -> None:
        self.tracker.abort()
        self.session.close()

    def start_call(
        self, pool: Executor, method: str, path: str, body: bytes | None, headers: dict[str, str], budget_s: float,
        empty_ok: bool = False,
    ) -> PendingCall:
        started = time.perf_counter()
        deadline = started + max(budget_s, 0.0)
        future = pool.submit(self._perform, method, path, body, headers, deadline, empty_ok)
        return PendingCall(self, future, started, deadline)

    def call(self, watchdog: Watchdog, method: str, path: str, body: bytes | None, headers: dict[str, str],
             budget_s: float, empty_ok: bool = False) -> Reply:
        """Make the call in this thread; the watchdog cuts the connection at the deadline. ``empty_ok``:
        an empty 2xx body is a fine answer (``/start`` and ``/end``), with ``data`` None."""
        started = time.perf_counter()
        deadline = started + max(budget_s, 0.0)
        entry = watchdog.arm(deadline, self.tracker)
        try:
            return self._perform(method, path, body, headers, deadline, empty_ok)
        finally:
            watchdog.disarm(entry)

    def signed_headers(self, match_id: str, turn: int, body: bytes) -> dict[str, str]:
        return protocol.headers(match_id, turn, self.secret, body)

    # -- runs in a worker thread -------------------------------------------------------------------
    def _perform(self, method: str, path: str, body: bytes | None, headers: dict[str, str], deadline: float,
                 empty_ok: bool = False) -> Reply:
        with self._busy:
            t0 = time.perf_counter()
            try:
                return self._exchange(method, path, body, headers, t0, deadline, empty_ok)
            except Exception as exc:  # the last line of defence: a bot can never crash the referee
                return _fault(FaultKind.CONNECTION, f"unexpected failure: {exc!r}", t0)

    def _exchange(self, method: str, path: str, body: bytes | None, headers: dict[str, str], t0: float,
                  deadline: float, empty_ok: bool) -> Reply:
        remaining = deadline - t0
        if remaining <= 0:
            return _fault(FaultKind.TIMEOUT, "no time left for this call", t0)
        try:
            response = self.session.request(method, path, body, headers, remaining)
        except UnsafeURL as exc:
            return _fault(FaultKind.UNSAFE_URL, str(exc), t0)
        except ResolveTimeout:
            return _fault(FaultKind.TIMEOUT, "name resolution of the bot's host did not finish in time", t0)
        except Exception as exc:  # OSError, http.client.HTTPException and whatever a bad answer raises
            return self._network_fault(exc, t0, deadline)
        headers_ms = (time.perf_counter() - t0) * 1000
        complete = False
        try:
            reply, complete = self._read(response, t0, deadline, empty_ok)
            return dataclasses.replace(reply, headers_ms=headers_ms)
        finally:
            self.session.release(response, complete)

    def _read(self, response: http.client.HTTPResponse, t0: float, deadline: float,
              empty_ok: bool) -> tuple[Reply, bool]:
        """The reply, and whether the answer was read whole (so the connection may be kept)."""
        status = response.status
        try:
            if not 200 <= status < 300:
                head = response.read(200) if status < 300 or status >= 400 else b""
                location = response.getheader("Location")
                note = f" (redirect to {location!r} not followed)" if location else ""
                # kept when that read the whole (small) answer: a 401 or 409 need not cost a new connection
                return _fault(FaultKind.HTTP_STATUS, f"HTTP {status}{note}", t0, head, status), True
            declared = response.getheader("Content-Length")
            if declared is not None and declared.isdigit() and int(declared) > self.max_response_bytes:
                return _fault(FaultKind.TOO_LARGE, f"declared {declared} bytes, cap {self.max_response_bytes}",
                              t0, status=status), False
            data = bytearray()
            while chunk := response.read(CHUNK):
                data += chunk
                if len(data) > self.max_response_bytes:
                    return _fault(FaultKind.TOO_LARGE, f"more than {self.max_response_bytes} bytes", t0,
                                  bytes(data[:200]), status), False
            if response.length:  # http.client returns a body cut short by EOF without complaint
                raise http.client.IncompleteRead(bytes(data[:200]), response.length)
        except Exception as exc:  # OSError, http.client.HTTPException (IncompleteRead, bad chunks, ...)
            return self._network_fault(exc, t0, deadline), False
        latency_ms = (time.perf_counter() - t0) * 1000
        if time.perf_counter() > deadline:
            return Reply(None, latency_ms, Fault(FaultKind.TIMEOUT, "answer completed after the deadline",
                                                 latency_ms, excerpt(bytes(data))), status), False
        if empty_ok and not data.strip():
            return Reply(None, latency_ms, None, status, body_bytes=len(data)), True
        try:
            parsed = parse_json(bytes(data))
        except (ValueError, RecursionError) as exc:
            return Reply(None, latency_ms, Fault(FaultKind.BAD_JSON, f"not JSON: {exc}"[:300], latency_ms,
                                                 excerpt(bytes(data))), status), True
        return Reply(parsed, latency_ms, None, status, body_bytes=len(data)), True

    def _network_fault(self, exc: BaseException, t0: float, deadline: float) -> Reply:
        if time.perf_counter() >= deadline or isinstance(exc, TimeoutError):
            return _fault(FaultKind.TIMEOUT, "no complete answer before the deadline", t0)
        # Name the bot's host as urllib3's messages did (the arena blanks it before anything is shown).
        return _fault(FaultKind.CONNECTION, _short(exc, f" (talking to {self.session.host_header})"), t0)


class PendingCall:
    """A call in flight; ``wait`` returns by its deadline, cutting the connection if it must."""

    def __init__(self, client: BotClient, future: Future[Reply], started: float, deadline: float) -> None:
        self.client = client
        self.future = future
        self.started = started
        self.deadline = deadline

    def wait(self) -> Reply:
        try:
            return self.future.result(timeout=max(self.deadline - time.perf_counter(), 0.0))
        except FutureTimeout:
            self.client.tracker.abort()
            self.future.cancel()
            return _fault(FaultKind.TIMEOUT, "no complete answer before the deadline", self.started)


def _fault(kind: FaultKind, message: str, t0: float, evidence: bytes | None = None,
           status: int | None = None) -> Reply:
    latency_ms = (time.perf_counter() - t0) * 1000
    return Reply(None, latency_ms, Fault(kind, message, latency_ms, excerpt(evidence)), status)


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


class Asker:
    """Makes a batch of calls at once: a lone call runs in the caller's thread under the watchdog,
    several run concurrently on the pool; either way every reply is back by its own deadline."""

    def __init__(self, pool: Executor, watchdog: Watchdog) -> None:
        self.pool = pool
        self.watchdog = watchdog

    def ask(self, calls: dict[int, Call]) -> dict[int, Reply]:
        """The first call runs in this thread, the others on the pool; every call is cut by the
        watchdog at its own deadline, whichever thread carries it."""
        if not calls:
            return {}
        (first, lead), *rest = calls.items()
        pending = {}
        armed = []
        try:
            for seat, c in rest:
                call = c.client.start_call(self.pool, c.method, c.path, c.body, c.headers, c.budget_s, c.empty_ok)
                armed.append(self.watchdog.arm(call.deadline, c.client.tracker))
                pending[seat] = call
            replies = {first: lead.client.call(self.watchdog, lead.method, lead.path, lead.body, lead.headers,
                                               lead.budget_s, lead.empty_ok)}
            for seat, call in pending.items():
                replies[seat] = call.wait()
        finally:
            for entry in armed:
                self.watchdog.disarm(entry)
        return {seat: replies[seat] for seat in calls}
