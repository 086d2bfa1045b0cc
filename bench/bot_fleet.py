"""SDK bots served by processes of their own, as in real use, for the referee benchmarks.

A bot served by a thread of the benchmark's own process shares its interpreter lock with the referee:
each side's Python work then waits for the other's and both the referee's time and the bare round trip
measure that contention rather than the referee. Each bot here has its own process; it records the
/act requests it is sent and when, so a bare client can later send the very same bytes in the same
order (a bot asked again at once answers faster than one asked after the others: its process is still
awake).

A bot's ``delay_s`` counts from the moment its server read the request line, not from when ``act`` is
called: a bot that takes 100 ms answers 100 ms after the request reached it, its own HTTP and JSON work
included (six bots parsing their requests on two cores otherwise start their clocks up to a millisecond
apart, and that was counted as the referee's). Each bot also reports its own time per request outside
``act`` (reading and parsing before, encoding and writing after) and its process's CPU time.
"""

from __future__ import annotations

import multiprocessing
import threading
import time
from multiprocessing.connection import Connection
from types import TracebackType
from typing import Any, ClassVar

from referee import protocol
from sample_bots.random_bot import make_bot
from sample_bots.sdk import Bot, BotRequestHandler, BotServer


class _Marks(threading.local):
    arrived = 0.0  # when the request line was read
    acted = (0.0, 0.0)  # when act was called and when it returned


_marks = _Marks()


class _TimedHandler(BotRequestHandler):
    """Marks when a request arrived and when its answer was written."""

    own: ClassVar[list[tuple[float, float]]] = []  # per /act: ms before act, ms after it

    def parse_request(self) -> bool:
        _marks.arrived = time.perf_counter()
        _marks.acted = (0.0, 0.0)
        return super().parse_request()

    def handle_one_request(self) -> None:
        super().handle_one_request()
        called, returned = _marks.acted
        if called:
            self.own.append(((called - _marks.arrived) * 1000, (time.perf_counter() - returned) * 1000))


def _serve(pipe: Connection, seed: int, delay_s: float) -> None:
    inner = make_bot(seed)
    seen: list[tuple[float, dict[str, Any]]] = []

    late_ms: list[float] = []

    def act(request: dict[str, Any]) -> Any:
        called = time.perf_counter()
        seen.append((time.time(), request))
        action = inner.act(request)
        if delay_s:
            _until(_marks.arrived + delay_s)
            late_ms.append((time.perf_counter() - _marks.arrived - delay_s) * 1000)
        _marks.acted = (called, time.perf_counter())
        return action

    server = BotServer(Bot(name=f"fleet{seed}", act=act, games=inner.games))
    server.RequestHandlerClass = _TimedHandler
    threading.Thread(target=server.serve_forever, daemon=True).start()
    pipe.send(server.url)
    while (order := pipe.recv()) != "stop":
        if order == "bodies":
            pipe.send([(at, protocol.encode(request)) for at, request in seen])
        elif order == "late":
            pipe.send(late_ms)
        elif order == "own":
            pipe.send(_TimedHandler.own)
        elif order == "cpu":
            pipe.send(time.process_time())
    server.shutdown()
    server.server_close()


SPIN_S = 0.0005  # a short busy wait only: six bots spinning long on two cores make one another late


def _until(moment: float) -> None:
    """Return at ``moment`` (``perf_counter``) as precisely as the process can: sleep most of the way,
    then spin, so a bot's 100 ms are 100 ms and a step's overshoot is the referee's."""
    if (ahead := moment - time.perf_counter() - SPIN_S) > 0:
        time.sleep(ahead)
    while time.perf_counter() < moment:
        pass


class BotFleet:
    """``n`` random SDK bots, one process each, that each answer ``delay_s`` after ``act`` is called."""

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

    def late_ms(self) -> list[float]:
        """How late each delayed answer left the bots' ``act`` (after its ``delay_s``), in ms."""
        return self._ask("late")

    def own_ms(self) -> list[tuple[float, float]]:
        """Per /act answered so far, every bot's own time before ``act`` was called (reading and parsing
        the request) and after it returned (encoding and writing the answer), in ms."""
        return self._ask("own")

    def cpu_s(self) -> float:
        """The CPU time (user + system, all threads) the bots' processes have used so far, summed."""
        total = 0.0
        for pipe in self._pipes:
            pipe.send("cpu")
            total += pipe.recv()
        return total

    def _ask(self, order: str) -> list[Any]:
        out: list[Any] = []
        for pipe in self._pipes:
            pipe.send(order)
            out += pipe.recv()
        return out

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
