"""A batch of calls to bots (a step's acting seats, or every seat at /start and /end), made at once.

Calls on kept-alive plain connections (every call after a match's first, unless a fault closed the
connection) are carried by the caller's thread over non-blocking sockets (``referee.multiplex``): no
hand-off to another thread. The others (a new connection: URL guard, name resolution, connect, TLS)
run on the call pool's threads, or the caller's own when nothing else is in flight, each cut by the
watchdog at its deadline. Either way every reply is back by its own deadline.
"""

from __future__ import annotations

from concurrent.futures import Executor

from referee import multiplex
from referee.bot_client import Call, PendingCall, Reply
from referee.watchdog import Watchdog


class Asker:
    def __init__(self, pool: Executor, watchdog: Watchdog) -> None:
        self.pool = pool
        self.watchdog = watchdog

    def ask(self, calls: dict[int, Call]) -> dict[int, Reply]:
        """Every call's reply, by seat, each by its own deadline."""
        if not calls:
            return {}
        kept, rest = multiplex.claim(calls)
        lead = None
        if not kept and rest:
            lead = next(iter(rest))
        pending: dict[int, PendingCall] = {}
        armed = []
        replies: dict[int, Reply] = {}
        try:
            for seat, c in rest.items():
                if seat == lead:
                    continue
                call = c.client.start_call(self.pool, c.method, c.path, c.body, c.headers, c.budget_s, c.empty_ok)
                armed.append(self.watchdog.arm(call.deadline, call.cut))
                pending[seat] = call
            if kept:
                replies.update(multiplex.carry(kept))
                kept = {}
            if lead is not None:
                c = rest[lead]
                replies[lead] = c.client.call(self.watchdog, c.method, c.path, c.body, c.headers, c.budget_s,
                                              c.empty_ok)
            for seat, call in pending.items():
                replies[seat] = call.wait()
        finally:
            multiplex.release(kept)  # claimed, never carried: an error on the way must not hold the seats
            for entry in armed:
                self.watchdog.disarm(entry)
        return {seat: replies[seat] for seat in calls}
