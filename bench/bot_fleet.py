"""SDK bots served by processes of their own, as in real use, for the referee benchmarks.

A bot served by a thread of the benchmark's own process shares its interpreter lock with the referee:
each side's Python work then waits for the other's and both the referee's time and the bare round trip
measure that contention rather than the referee. Each bot here has its own process; it records the
/act requests it is sent and when, so a bare client can later send the very same bytes in the same
order (a bot asked again at once answers faster than one asked after the others: its process is still
awake).
"""

from __future__ import annotations

import multiprocessing
import time
from multiprocessing.connection import Connection
from types import TracebackType
from typing import Any

from referee import protocol
from sample_bots.random_bot import make_bot
from sample_bots.sdk import Bot, start_in_thread


def _serve(pipe: Connection, seed: int, delay_s: float) -> None:
    inner = make_bot(seed)
    seen: list[tuple[float, dict[str, Any]]] = []

    def act(request: dict[str, Any]) -> Any:
        seen.append((time.time(), request))
        if delay_s:
            time.sleep(delay_s)
        return inner.act(request)

    server = start_in_thread(Bot(name=f"fleet{seed}", act=act, games=inner.games))
    pipe.send(server.url)
    while (order := pipe.recv()) != "stop":
        if order == "bodies":
            pipe.send([(at, protocol.encode(request)) for at, request in seen])
    server.shutdown()
    server.server_close()


class BotFleet:
    """``n`` random SDK bots, one process each, that each take ``delay_s`` per decision."""

    def __init__(self, n: int, delay_s: float = 0.0) -> None:
        context = multiprocessing.get_context("spawn")
        self._pipes: list[Connection] = []
        self._procs: list[Any] = []
        for seed in range(n):
            ours, theirs = context.Pipe()
            proc = context.Process(target=_serve, args=(theirs, seed, delay_s), daemon=True)
            proc.start()
            self._pipes.append(ours)
            self._procs.append(proc)
        self.urls: list[str] = [pipe.recv() for pipe in self._pipes]

    def bodies(self) -> list[tuple[str, bytes]]:
        """Every /act body the bots were sent so far, exactly as sent, with the bot's URL, in the order
        they were received."""
        out: list[tuple[float, str, bytes]] = []
        for url, pipe in zip(self.urls, self._pipes, strict=True):
            pipe.send("bodies")
            out += [(at, url, body) for at, body in pipe.recv()]
        return [(url, body) for _at, url, body in sorted(out)]

    def close(self) -> None:
        for pipe in self._pipes:
            pipe.send("stop")
        for proc in self._procs:
            proc.join(5)
            if proc.is_alive():
                proc.kill()
                proc.join()

    def __enter__(self) -> BotFleet:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()
