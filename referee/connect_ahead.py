"""The next match's connections to its bots, opened while the worker records the match before.

A match's ``/start`` to a bot the match before did not seat waits for a new connection: the connect, and in
most bot servers a thread or task that accepts it, and it goes by the referee's threaded path (only kept
connections are carried by ``referee.multiplex``). A worker's batch knows its next match's seats before it
records the match it has just played, so it starts those connections then (``open_ahead``) and gives them
to its ``ConnectionKeeper``: the bot accepts while the worker records, and the next match takes them as
kept connections. Measured on two-seat Piranha Pedro against four instant bots (docs/benchmarks.md, issue
19, the nineteenth session).

What holds as for a connection opened at ``/start``:

- **The URL guard.** The host is resolved and every address checked by the same code
  (``bot_addresses.checked_addresses``), the connection goes to the checked address, and a refusal happens
  before any connection is attempted. Nothing is recorded here: the match's own ``/start`` tries again and
  records the fault as it always did.
- **Nothing waits here.** The connect is started non-blocking and handed over at once, established or not. The
  next match uses it as any kept connection: established, it carries ``/start`` at once; still connecting,
  ``/start`` goes out once it is connected, within ``/start``'s deadline (a connect that takes too long is
  a timeout fault either way); failed (refused, no route), the poll before reuse finds it closed and the call
  opens a new connection (``multiplex.claim``), which meets the failure again and records it, as before.
- **Names are resolved in a thread of their own** (an IP literal needs none): a slow resolver never holds up
  the record. A connection whose resolution ends after the next match began is never opened (or, opened
  just as it began, is closed: ``ConnectionKeeper.give``'s window). These resolutions have slots of their own
  (``MAX_RESOLVING_AHEAD``; none free: the name is left to ``/start``), so a bot whose name server never
  answers cannot take the slots ``/start``'s own resolutions need (``bot_addresses.MAX_RESOLVING``).
- **A fault is the bot's**, as on a connection opened at ``/start``: one opened ahead is not given the second
  ``/start`` a connection kept from an earlier match gets when it fails before any answer
  (``runner._cut_while_kept``: that one was idle, and may have met the bot's idle timeout as ``/start`` went out).
- **The keeper's rule.** Opened only for the match the batch plays next, held only until it starts: the bots
  it does not seat after all (claimed meanwhile by another worker, not played) are closed when it starts or
  when the batch drops its idle connections.

Only ``http`` URLs: a TLS handshake needs round trips of its own and is left to ``/start``.
"""

from __future__ import annotations

import contextlib
import errno
import socket
import threading
from collections.abc import Hashable, Iterable
from urllib.parse import urlsplit

from referee.bot_addresses import DNS_TIMEOUT_S, AddressGuard, Resolver, checked_addresses, is_literal, resolve
from referee.connection_keeper import ConnectionKeeper, connection_key
from referee.url_guard import check_url_shape

MAX_RESOLVING_AHEAD = 8  # names of next matches' bots being resolved at once, apart from bot_addresses.MAX_RESOLVING
_resolving_ahead = threading.BoundedSemaphore(MAX_RESOLVING_AHEAD)


def open_ahead(keeper: ConnectionKeeper, urls: Iterable[str], guard: AddressGuard | None,
               resolver: Resolver = resolve, dns_timeout_s: float = DNS_TIMEOUT_S) -> list[threading.Thread]:
    """Start a connection to each of ``urls`` (the next match's bots) that ``keeper`` holds none for, into
    ``keeper`` until the next match starts. Returns the threads resolving names (nobody needs to wait for
    them: the match takes what has come by then). Never raises: this is only a saving, and the match just
    played still has to be recorded."""
    window = keeper.window()
    resolving: list[threading.Thread] = []
    for url in dict.fromkeys(urls):
        try:
            thread = _ahead(keeper, url, window, guard, resolver, dns_timeout_s)
        except Exception:  # a URL the match's /start will refuse and record; no thread to be had
            continue
        if thread is not None:
            resolving.append(thread)
    return resolving


def _ahead(keeper: ConnectionKeeper, url: str, window: int, guard: AddressGuard | None, resolver: Resolver,
           dns_timeout_s: float) -> threading.Thread | None:
    url = check_url_shape(url)
    parts = urlsplit(url)
    key = connection_key(url, guard, resolver)
    if parts.scheme != "http" or keeper.holds(key):
        return None
    host = parts.hostname or ""
    job = (keeper, key, window, host, parts.port or 80, guard, resolver, dns_timeout_s)
    if is_literal(host, resolver):
        _open(*job)
        return None
    thread = threading.Thread(target=_open, args=job, name="arena-connect-ahead", daemon=True)
    thread.start()
    return thread


def _resolve_here(resolver: Resolver, host: str, port: int, _timeout_s: float) -> list[str]:
    """The resolution in this (the connection's own) thread, in a slot of those kept for connections ahead; nobody
    waits for it, so it takes as long as the resolver does (a connection it comes too late for is not made)."""
    if not _resolving_ahead.acquire(blocking=False):
        raise socket.gaierror(f"too many name resolutions ahead in progress to resolve {host!r}")
    try:
        return resolver(host, port)
    finally:
        _resolving_ahead.release()


def _open(keeper: ConnectionKeeper, key: Hashable, window: int, host: str, port: int, guard: AddressGuard | None,
          resolver: Resolver, dns_timeout_s: float) -> None:
    try:
        address = checked_addresses(host, port, dns_timeout_s, guard, resolver, dns_timeout_s, _resolve_here)[0]
    except Exception:  # refused by the guard, not resolved: left to the match's /start, which records it
        return
    if keeper.window() != window:
        return  # the match it was for has started: no connection now
    try:
        sock = socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET, socket.SOCK_STREAM)
    except OSError:
        return
    try:
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        started = sock.connect_ex((address, port))
    except OSError:
        started = -1
    if started not in (0, errno.EINPROGRESS):
        with contextlib.suppress(OSError):
            sock.close()
        return
    keeper.give(key, sock, window)
