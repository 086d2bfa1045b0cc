"""The bot's socket: one kept-alive ``http.client`` connection per seat, guarded and cuttable.

``requests`` cost about a millisecond of CPU per call on the referee's hot path; the standard library's
``http.client`` over a socket we open ourselves does the same work for a fraction of it. What the
connection layer guarantees:

- **A hard deadline.** Socket timeouts apply to each read, so a bot that drips one byte at a time
  never trips them. Every connection registers itself with its client's ``ConnectionTracker`` when a
  request starts; when the deadline passes, the call is cut: the watchdog fires the call's own ``CallCut``
  (``referee.multiplex`` ends its calls by its own poll deadlines), which shuts the socket down and
  unblocks the reading thread at once, and cuts that call only, never the seat's next one.
- **The URL guard at connect time.** The host is resolved once, every address is checked by the
  guard (``referee.bot_addresses``), and the connection goes to the checked address itself, so a DNS
  answer that changes between check and connect (rebinding) cannot reach a refused address. A refusal
  happens before any connection attempt.
- **A moment without a route is not the bot's fault.** "No route to host" on connecting is tried again
  until the deadline (``connect_within``): a worker's own link, just healed, gives it for a moment.
- **Bounded name resolution**, in a thread of its own (``referee.bot_addresses``).
- **No reuse of a doubtful connection.** A connection is kept only after a complete, well-framed
  answer; anything else (a fault, an unread body, ``Connection: close``) closes it. Before reuse, a
  kept connection the bot has closed meanwhile is noticed and replaced, as urllib3 does.
"""

from __future__ import annotations

import contextlib
import errno
import http.client
import select
import socket
import ssl
import struct
import threading
import time
from urllib.parse import urlsplit

from referee.bot_addresses import (
    DNS_TIMEOUT_S,
    AddressGuard,
    ResolveFailed,
    Resolver,
    ResolveTimeout,
    UnsafeURL,
    checked_addresses,
    resolve,
    resolve_within,
)


class ConnectionTracker:
    """Knows the connection a client is using right now, so a watchdog can cut it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._active: socket.socket | None = None
        self._owner: CallCut | None = None  # the call ``_active`` carries, when a watchdog may cut it
        self._shut = False
        self.connections = 0  # TCP connections opened: more than one per seat means no keep-alive

    def connected(self) -> None:
        with self._lock:
            self.connections += 1

    def started(self, sock: socket.socket, owner: CallCut | None = None) -> None:
        """``sock`` carries the call about to be written (``owner``: its watchdog handle); cut at once if
        the tracker is shut or the call was given up on already."""
        with self._lock:
            self._active, self._owner = sock, owner
            if self._shut or (owner is not None and owner.aborted):
                _cut(sock)  # a crossed fence, or a call already given up on: it writes nothing

    def finished(self) -> None:
        """The call is over: nothing is active until the next one starts, so a cut meant for this call
        reaches neither the idle kept connection nor the seat's next call."""
        with self._lock:
            self._active, self._owner = None, None

    # Each cut happens under the lock: a cut decided for one call and made a moment later (its thread paused
    # between the two) could otherwise land on the seat's next call, which may reuse the same socket.
    def abort(self) -> None:
        """Shut down the active socket: a blocked read returns at once and the connection is dropped."""
        with self._lock:
            if self._active is not None:
                _cut(self._active)

    def abort_call(self, owner: CallCut) -> None:
        """``abort``, only while ``owner``'s call is the one running; a call that has not started yet (still
        resolving or connecting) is cut as it starts (``started``), before it writes a byte."""
        with self._lock:
            owner.aborted = True
            if self._active is not None and self._owner is owner:
                _cut(self._active)

    def shut(self) -> None:
        """``abort``, and every call from now on too, before it writes a byte (``referee.fence``)."""
        with self._lock:
            self._shut = True
            if self._active is not None:
                _cut(self._active)


class CallCut:
    """A watchdog's handle on one call: it cuts that call's connection and nothing else. Armed on the
    tracker itself, the deadline of a call that had already finished (a seat's quick ``/start`` while
    another seat's slow one held the batch) reset the seat's idle kept connection, or the seat's next
    call if the watchdog thread ran late: a ``connection_error`` on a turn of a bot that did no wrong."""

    __slots__ = ("aborted", "tracker")

    def __init__(self, tracker: ConnectionTracker) -> None:
        self.tracker = tracker
        self.aborted = False  # set for good by the cut: the call, if it starts later, is cut as it starts

    def abort(self) -> None:
        self.tracker.abort_call(self)


def _cut(sock: socket.socket) -> None:
    discard_on_close(sock)
    with contextlib.suppress(OSError):  # already closed: nothing left to cut
        sock.shutdown(socket.SHUT_RDWR)


def discard_on_close(sock: socket.socket) -> None:
    """A connection given up on (its call timed out or failed) is reset when closed, and the kernel drops
    what it has not yet delivered of the request. Closed gracefully, it kept retransmitting: a turn sent
    over a link that was cut reached the bot when the link healed, seconds after the match had been
    played elsewhere and recorded (the cluster test's worker partition)."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def guarded_socket(host: str, port: int, timeout_s: float, guard: AddressGuard | None, resolver: Resolver,
                   dns_timeout_s: float) -> socket.socket:
    """A TCP connection to the first address ``host`` resolves to, after every address passed the guard
    (``checked_addresses``: any refusal comes before a connection attempt); or the connect's ``OSError``."""
    deadline = time.perf_counter() + timeout_s
    addresses = checked_addresses(host, port, timeout_s, guard, resolver, dns_timeout_s)
    # what the resolution left (given the whole budget again, a connect after a slow one ran past the deadline)
    sock = connect_within(addresses[0], port, max(deadline - time.perf_counter(), 0.001))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


NO_ROUTE = (errno.EHOSTUNREACH, errno.ENETUNREACH)
NO_ROUTE_RETRY_S = 0.1


def connect_within(address: str, port: int, timeout_s: float) -> socket.socket:
    """``socket.create_connection``, tried again while the kernel answers that there is no route to the
    host, until the call's deadline. A worker whose link had been cut got "No route to host" at once for
    its first connections after the heal (its neighbour entry for the bots' host had failed meanwhile),
    and every seat of the match it had just claimed forfeited at ``/start``: the match went void (the
    cluster test's worker partition). Nothing has been sent before a connection exists, so trying again
    cannot deliver a request twice. A refusal, a timeout or the deadline ends it as before."""
    deadline = time.perf_counter() + timeout_s
    while True:
        try:
            return socket.create_connection((address, port), max(deadline - time.perf_counter(), 0.001))
        except OSError as exc:
            if exc.errno not in NO_ROUTE or deadline - time.perf_counter() <= NO_ROUTE_RETRY_S:
                raise
        time.sleep(NO_ROUTE_RETRY_S)


def _dropped(sock: socket.socket) -> bool:
    """An idle kept-alive socket that is readable has been closed (or spoken on) by the bot: not reusable."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


def _line(text: str) -> str:
    if "\r" in text or "\n" in text:
        raise ValueError("line breaks are not allowed in a request line or header")
    return text


class _LastLine:
    """The response's reader while its head is read, remembering the last line it gave."""

    def __init__(self, fp) -> None:  # type: ignore[no-untyped-def]
        self.fp, self.last = fp, None  # (the reader, the last line it gave)

    def readline(self, limit: int = -1) -> bytes:
        self.last = self.fp.readline(limit)
        return self.last

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        return getattr(self.fp, name)


class WholeHeadResponse(http.client.HTTPResponse):
    """``http.client``'s response, except that a head the bot cut short (the connection closed before the
    blank line that ends it) is an ``IncompleteRead``: http.client takes the end of the stream for the end
    of the head, and the empty body that followed made it a ``bad_json`` fault here while
    ``referee.http_wire`` (the multiplexed path) said the connection closed in the middle of the answer."""

    def begin(self) -> None:
        fp = self.fp
        watch = _LastLine(fp)
        self.fp = watch
        try:
            super().begin()
        finally:
            if self.fp is watch:  # (begin may have closed it: None)
                self.fp = fp
        if watch.last == b"":
            self.close()
            raise http.client.IncompleteRead(b"")


class BotConnection:
    """One seat's kept-alive connection to its bot; not thread-safe (the client serialises calls).

    The request goes out in one write (``http.client`` writes the head and the body separately: two
    system calls, and two wake-ups of the bot); the answer is read by ``http.client.HTTPResponse``, which
    handles the framing (length, chunks, close) and its limits."""

    def __init__(self, url: str, tracker: ConnectionTracker, guard: AddressGuard | None = None,
                 resolver: Resolver = resolve, dns_timeout_s: float = DNS_TIMEOUT_S,
                 user_agent: str = "arena-referee/1", kept: socket.socket | None = None) -> None:
        parts = urlsplit(url)
        self.tls = parts.scheme == "https"
        self.host = parts.hostname or ""
        self.port = parts.port or (443 if self.tls else 80)
        self.prefix = parts.path.rstrip("/")
        host = f"[{self.host}]" if ":" in self.host else self.host
        self.host_header = host if parts.port is None else f"{host}:{self.port}"
        self.tracker = tracker
        self.guard, self.resolver, self.dns_timeout_s = guard, resolver, dns_timeout_s
        self.user_agent = user_agent
        self._sock: socket.socket | None = kept  # idle, from an earlier match (``referee.connection_keeper``)
        self._tls: ssl.SSLContext | None = None

    def _connect(self, timeout_s: float) -> socket.socket:
        deadline = time.perf_counter() + timeout_s
        sock = guarded_socket(self.host, self.port, timeout_s, self.guard, self.resolver, self.dns_timeout_s)
        if not self.tls:
            return sock
        try:
            # CPython bounds the whole handshake by the socket's timeout: what the resolution and the connect
            # left of the budget (the connect's own, kept, would let a dripped handshake run past the deadline)
            sock.settimeout(max(deadline - time.perf_counter(), 0.001))
            if self._tls is None:
                self._tls = ssl.create_default_context()
            return self._tls.wrap_socket(sock, server_hostname=self.host)
        except BaseException:
            sock.close()
            raise

    def request(self, method: str, path: str, body: bytes | None, headers: dict[str, str],
                timeout_s: float, owner: CallCut | None = None) -> http.client.HTTPResponse:
        """Send the request and read the status line and headers; the body is left to the caller, who
        hands the response back to ``release``. Any failure closes the connection and raises. ``owner``:
        the watchdog's handle on this call."""
        message = self.message(method, path, body, headers)
        sock = self._sock
        if sock is not None and _dropped(sock):
            self.close()
            sock = None
        try:
            if sock is None:
                sock = self._sock = self._connect(timeout_s)
                self.tracker.connected()
            else:
                sock.settimeout(timeout_s)
            self.tracker.started(sock, owner)
            sock.sendall(message)
            response = WholeHeadResponse(sock, method=method)
            response.begin()
            return response
        except BaseException:
            self.close(abandon=True)
            raise

    def message(self, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> bytes:
        """The whole request, head and body, to be written at once."""
        lines = [_line(f"{method} {self.prefix}{path} HTTP/1.1"), f"Host: {self.host_header}",
                 f"User-Agent: {self.user_agent}"]
        lines += [_line(f"{name}: {value}") for name, value in headers.items()]
        if body is not None or method in ("POST", "PUT"):
            lines.append(f"Content-Length: {len(body or b'')}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (body or b"")

    def kept_socket(self) -> socket.socket | None:
        """The kept-alive plain-TCP socket, if there is one (not checked for a close by the bot: the
        caller polls it). TLS connections are left to ``request``."""
        return None if self.tls else self._sock

    def release(self, response: http.client.HTTPResponse, complete: bool) -> None:
        """Keep the connection only after a complete answer the bot did not ask to close."""
        reusable = complete and not response.will_close and response.isclosed()
        response.close()
        if not reusable:
            self.close(abandon=not complete)

    def detach(self) -> socket.socket | None:
        """Hand the kept connection over (to a later match), leaving this one without; None if there is none."""
        sock, self._sock = self._sock, None
        return sock

    def close(self, abandon: bool = False) -> None:
        """``abandon``: the exchange failed, so nothing still queued for the bot may reach it later."""
        sock, self._sock = self._sock, None
        if sock is not None:
            if abandon:
                discard_on_close(sock)
            sock.close()


__all__ = ["DNS_TIMEOUT_S", "AddressGuard", "BotConnection", "CallCut", "ConnectionTracker", "ResolveFailed",
           "ResolveTimeout", "UnsafeURL", "checked_addresses", "guarded_socket", "resolve", "resolve_within"]
