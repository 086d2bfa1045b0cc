"""Idle connections to bots, handed from one match of a worker's batch to the next.

A match opens a new connection to every seat's bot: a TCP connect (a TLS handshake too, over https) and,
in most bot servers, a new thread or task, before ``/start`` is even sent; over the internet that is one
to three round trips per seat and match. Consecutive matches of a batch often seat the same bots, so the
connections a match ends with, idle and clean, go to the next match if it seats the same URL.

Held only from the end of one match to the start of the next: the next match takes what it can use and
the rest is closed (``drop_idle``; the batch also drops them when its next match is not played: skipped,
given up, lost), and nothing idle longer than ``MAX_IDLE_S`` is handed out. So a bot has no connection
held open by a worker that is not playing it beyond the moments between two of the worker's matches (a
bot server with a thread per connection would see its threads taken by idle connections), and a
connection is not handed on after an idle time that a server's or a middlebox's idle timeout could end.

What stays as it was:

- **The URL guard.** A kept connection goes to the address checked when it was opened, by this process,
  under an equal guard and the same resolver (both part of the key): nothing is resolved again, so
  nothing can rebind.
- **No reuse of a doubtful connection.** Only a match that ended normally gives its connections back, and
  only those idle after a complete answer (``BotClient.detach``); a match cut short (a crossed fence, a lost
  lease, the arena's own error) closes every one, as before.
- **A connection the bot closed while idle** is noticed before reuse and replaced (the poll that
  ``multiplex.claim`` and ``BotConnection.request`` make). The one race a poll cannot see, the bot
  closing it just as ``/start`` goes out, would forfeit the seat: a connection fault before any answer's
  head, on the kept connection itself, is sent once more on a new one, within what is left of the first
  one's ``start_ms`` (``runner._start``); a fault after the head is the bot's, recorded as always.

The batch may also open the next match's connections before that match starts, while it records the one
before (``referee.connect_ahead``): each is given with the ``window`` it was opened in, and closed, not kept,
when it comes after the next match began.

Bounded by ``most`` (the least recently given closed first); the batch closes what is left when it ends
(``close``, or the ``with`` block).
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Hashable
from types import TracebackType

MOST = 16  # more than the seats of any match
MAX_IDLE_S = 1.0  # a match's record takes milliseconds; servers close idle connections after 2 s and more


class ConnectionKeeper:
    """Idle connections by key (the bot's URL, the guard and the resolver that let them be opened)."""

    def __init__(self, most: int = MOST, max_idle_s: float = MAX_IDLE_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.most, self.max_idle_s, self.clock = most, max_idle_s, clock
        self._idle: list[tuple[Hashable, socket.socket, float, bool]] = []  # (.., given at, opened ahead), oldest first
        self._lock = threading.Lock()
        self._closed = False
        self._window = 0  # moves on as each match starts (``drop_idle``) and when the keeper closes
        self.reused = 0  # connections handed to a later match: what the keeper saved

    def take(self, key: Hashable) -> tuple[socket.socket, bool] | None:
        """The most recently given idle connection for ``key`` (the least likely to have been closed by an
        idle timeout meanwhile), and whether it was opened ahead of the match (``give``'s ``window``) rather
        than used by an earlier one; or None. Those idle longer than ``max_idle_s`` are closed, not handed out."""
        stale: list[socket.socket] = []
        found = None
        with self._lock:
            oldest = self.clock() - self.max_idle_s
            while self._idle and self._idle[0][2] < oldest:
                stale.append(self._idle.pop(0)[1])
            for index in range(len(self._idle) - 1, -1, -1):
                if self._idle[index][0] == key:
                    self.reused += 1
                    _key, sock, _given, ahead = self._idle.pop(index)
                    found = sock, ahead
                    break
        for sock in stale:
            _close(sock)
        return found

    def holds(self, key: Hashable) -> bool:
        """Whether an idle connection for ``key`` is here (stale or not)."""
        with self._lock:
            return any(entry[0] == key for entry in self._idle)

    def window(self) -> int:
        """The time until the next match starts, as a token for ``give``: a connection opened for that match
        and given after it started (its window closed) is closed, not kept."""
        with self._lock:
            return self._window

    def give(self, key: Hashable, sock: socket.socket, window: int | None = None) -> None:
        """Keep ``sock`` for a later match (if ``window`` is given: only while it is open); beyond the bounds,
        the least recently given goes."""
        surplus: list[socket.socket] = []
        with self._lock:
            if self._closed or (window is not None and window != self._window):
                surplus.append(sock)
            else:
                self._idle.append((key, sock, self.clock(), window is not None))
                while len(self._idle) > self.most:
                    surplus.append(self._idle.pop(0)[1])
        for extra in surplus:
            _close(extra)

    def drop_idle(self) -> None:
        """Close what the match starting now did not take: no bot keeps a connection held by a worker that is
        not playing it."""
        with self._lock:
            idle, self._idle = self._idle, []
            self._window += 1
        for _key, sock, _given, _ahead in idle:
            _close(sock)

    def __len__(self) -> int:
        with self._lock:
            return len(self._idle)

    def close(self) -> None:
        """Close every idle connection; later ones given are closed at once."""
        with self._lock:
            self._closed = True
        self.drop_idle()

    def __enter__(self) -> ConnectionKeeper:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()


def connection_key(url: str, guard: Hashable, resolver: Hashable) -> tuple[Hashable, ...]:
    """Whose idle connections a seat may take: the same URL, checked by an equal guard and the same resolver."""
    return url, guard, resolver


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.close()
