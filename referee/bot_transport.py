"""The seam between ``requests`` and the bot's socket.

Two things ``requests`` cannot do alone, done at the connection level:

- **A hard deadline.** Socket timeouts apply to each read, so a bot that drips one byte at a time
  never trips them. Every connection registers itself with its client's ``ConnectionTracker`` when a
  request starts; when the deadline passes, the referee calls ``tracker.abort()``, which shuts the
  socket down and unblocks the reading thread at once.
- **The URL guard at connect time.** The host is resolved once, every address is checked by the
  guard, and the connection goes to the checked address itself, so a DNS answer that changes between
  check and connect (rebinding) cannot reach a refused address. A refusal happens before any
  connection attempt.
- **Bounded name resolution.** ``getaddrinfo`` cannot be interrupted and happens before there is a
  socket for the watchdog to cut, so a bot whose DNS server is slow would overrun its deadline. The
  resolver runs in a thread of its own; the request stops waiting at the call's deadline or at
  ``DNS_TIMEOUT_S``, whichever comes first, and fails as a connect timeout (a ``timeout`` fault).
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, NameResolutionError, NewConnectionError

from referee.errors import UnsafeURL

AddressGuard = Callable[[str, int], None]  # (ip, port) -> None or raise UnsafeURL
Resolver = Callable[[str, int], list[str]]

DNS_TIMEOUT_S = 2.0  # the most one name resolution may take, whatever the call's budget
MAX_RESOLVING = 64  # resolutions still running (abandoned ones included) before new ones are refused
_resolving = threading.BoundedSemaphore(MAX_RESOLVING)


def resolve(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to, in the resolver's order."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    seen: list[str] = []
    for _family, _type, _proto, _canon, sockaddr in infos:
        if sockaddr[0] not in seen:
            seen.append(sockaddr[0])
    return seen


class ResolveTimeout(OSError):
    """Name resolution did not finish in time."""


def resolve_within(resolver: Resolver, host: str, port: int, timeout_s: float) -> list[str]:
    """``resolver(host, port)``, waited for ``timeout_s`` at most. An abandoned resolution finishes in
    its daemon thread when the system resolver gives up; at most ``MAX_RESOLVING`` run at once, so a
    flood of slow names cannot pile up threads."""
    if not _resolving.acquire(blocking=False):
        raise socket.gaierror(f"too many name resolutions in progress to resolve {host!r}")
    outcome: list[list[str] | BaseException] = []
    done = threading.Event()

    def work() -> None:
        try:
            outcome.append(resolver(host, port))
        except BaseException as exc:  # handed to the waiting caller
            outcome.append(exc)
        finally:
            _resolving.release()
            done.set()

    threading.Thread(target=work, name="arena-resolve", daemon=True).start()
    if not done.wait(max(timeout_s, 0.0)):
        raise ResolveTimeout(f"name resolution of {host!r} took longer than {timeout_s:.3g} s")
    result = outcome[0]
    if isinstance(result, BaseException):
        raise result
    return result


class ConnectionTracker:
    """Knows the connection a client is using right now, so a watchdog can cut it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._active: HTTPConnection | None = None
        self.connections = 0  # TCP connections opened: more than one per seat means no keep-alive

    def connected(self) -> None:
        with self._lock:
            self.connections += 1

    def started(self, conn: HTTPConnection) -> None:
        with self._lock:
            self._active = conn

    def abort(self) -> None:
        """Shut down the active socket: a blocked read returns at once and the connection is dropped."""
        with self._lock:
            conn = self._active
        sock = getattr(conn, "sock", None) if conn is not None else None
        if sock is not None:
            with contextlib.suppress(OSError):  # already closed: nothing left to cut
                sock.shutdown(socket.SHUT_RDWR)


def _connection_classes(
    guard: AddressGuard | None, resolver: Resolver, tracker: ConnectionTracker, dns_timeout_s: float
) -> tuple[type[HTTPConnectionPool], type[HTTPSConnectionPool]]:
    """Pool classes whose connections are tracked and guarded (built per client: no globals)."""

    def new_conn(conn: HTTPConnection) -> socket.socket:
        host, port = conn._dns_host, conn.port
        budget = conn.timeout if isinstance(conn.timeout, int | float) else dns_timeout_s
        try:
            addresses = resolve_within(resolver, host, port, min(budget, dns_timeout_s))
        except ResolveTimeout as exc:
            raise ConnectTimeoutError(conn, f"name resolution timed out: {exc}") from exc
        except OSError as exc:
            raise NameResolutionError(conn.host, conn, exc) from exc
        if not addresses:
            raise NameResolutionError(conn.host, conn, socket.gaierror("no address"))
        if guard is not None:
            for address in addresses:
                guard(address, port)  # raises UnsafeURL before any connection is attempted
        try:
            return socket.create_connection((addresses[0], port), conn.timeout, conn.source_address)
        except TimeoutError as exc:
            raise ConnectTimeoutError(conn, f"connection to {conn.host} timed out") from exc
        except OSError as exc:
            raise NewConnectionError(conn, f"failed to connect: {exc}") from exc

    class Tracked:
        """Mixed into both connection classes: guarded connect, registration with the tracker."""

        def _new_conn(self) -> socket.socket:
            sock = new_conn(self)  # type: ignore[arg-type]
            tracker.connected()
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return sock

        def request(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            tracker.started(self)  # type: ignore[arg-type]
            return super().request(*args, **kwargs)  # type: ignore[misc]

    class TrackedHTTPConnection(Tracked, HTTPConnection):
        pass

    class TrackedHTTPSConnection(Tracked, HTTPSConnection):
        pass

    class Pool(HTTPConnectionPool):
        ConnectionCls = TrackedHTTPConnection

    class TLSPool(HTTPSConnectionPool):
        ConnectionCls = TrackedHTTPSConnection

    return Pool, TLSPool


class BotAdapter(HTTPAdapter):
    """A requests adapter with tracked, guarded connections; one per bot client (one kept-alive
    connection per seat)."""

    def __init__(self, tracker: ConnectionTracker, guard: AddressGuard | None = None,
                 resolver: Resolver = resolve, dns_timeout_s: float = DNS_TIMEOUT_S) -> None:
        self._pools = _connection_classes(guard, resolver, tracker, dns_timeout_s)
        super().__init__(pool_connections=1, pool_maxsize=2, max_retries=0)

    def init_poolmanager(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        super().init_poolmanager(*args, **kwargs)
        pool, tls_pool = self._pools
        self.poolmanager.pool_classes_by_scheme = {"http": pool, "https": tls_pool}


class BotSession(requests.Session):
    """Never follows, nor even prepares, a redirect: with ``allow_redirects=False`` requests would still
    read a redirect's whole body (uncapped) to prepare the next hop."""

    def get_redirect_target(self, resp: requests.Response) -> None:
        return None


def bot_session(tracker: ConnectionTracker, guard: AddressGuard | None = None,
                resolver: Resolver = resolve, dns_timeout_s: float = DNS_TIMEOUT_S) -> requests.Session:
    """A session that talks only to bots: no proxies from the environment, no redirects, no retries."""
    session = BotSession()
    session.trust_env = False
    adapter = BotAdapter(tracker, guard, resolver, dns_timeout_s)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    session.headers["User-Agent"] = "arena-referee/1"
    return session


__all__ = ["DNS_TIMEOUT_S", "AddressGuard", "BotAdapter", "ConnectionTracker", "UnsafeURL", "bot_session", "resolve",
           "resolve_within"]
