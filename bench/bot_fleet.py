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
apart, and that was counted as the referee's).

A delayed bot also keeps its own work away from the referee's, as a bot on a machine of its own does: it
reads, parses, acts and encodes its answer at half its delay (``DEFER``), not the moment the request
arrives, and when its time is up only the write of the answer is left. Done at once, the six bots'
reading, parsing and act (about 2 ms of CPU a step in all) ran on the two cores while the referee was
still writing the other seats' requests, whose thread then waited in the run queue: the six requests
arrived over 1.4-2.4 ms instead of 0.4-0.7 ms, and the last bot's 100 ms began that much later; and the
six bots' encoding at the 100 ms mark (another 1.2-1.4 ms of CPU) ran while the referee read the first
answers. The referee's own work is all still in the step, and so it is in the bare fan-out of the same
bots. Each bot reports when each answer was due and how late it began to leave, how long the write
took, and its process's CPU time.
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

DEFER = 0.5  # a delayed bot does its work at this fraction of its delay (see the module's docstring)


class _Marks(threading.local):
    arrived = 0.0  # when the request line was read
    due = 0.0  # when a delayed /act answer is due to leave (0: no delay)
    written = 0.0  # when it was let go


_marks = _Marks()


class _TimedHandler(BotRequestHandler):
    """A delayed bot's /act: its work at ``DEFER`` of the delay, only the write when the answer is due."""

    delay_s: ClassVar[float] = 0.0
    late: ClassVar[list[tuple[float, float]]] = []  # per delayed /act: when it was due, ms late its write began
    own: ClassVar[list[float]] = []  # per delayed /act: ms its write took

    def parse_request(self) -> bool:
        _marks.arrived = time.perf_counter()
        _marks.due = _marks.written = 0.0
        if self.delay_s and self.raw_requestline.split(b" ")[1:2] == [b"/act"]:
            _marks.due = _marks.arrived + self.delay_s
            time.sleep(self.delay_s * DEFER)
        return super().parse_request()

    def do_POST(self) -> None:
        super().do_POST()  # the answer is in ``wfile``'s buffer (64 KiB), not sent yet
        if _marks.due:
            _until(_marks.due)
            _marks.written = time.perf_counter()
            self.late.append((_marks.due, (_marks.written - _marks.due) * 1000))

    def handle_one_request(self) -> None:
        super().handle_one_request()  # flushes ``wfile``: the answer leaves
        if _marks.written:
            self.own.append((time.perf_counter() - _marks.written) * 1000)
            _marks.written = 0.0


def _serve(pipe: Connection, seed: int, delay_s: float) -> None:
    inner = make_bot(seed)
    seen: list[tuple[float, dict[str, Any]]] = []

    def act(request: dict[str, Any]) -> Any:
        seen.append((time.time(), request))
        return inner.act(request)

    server = BotServer(Bot(name=f"fleet{seed}", act=act, games=inner.games))
    _TimedHandler.delay_s = delay_s
    server.RequestHandlerClass = _TimedHandler
    threading.Thread(target=server.serve_forever, daemon=True).start()
    pipe.send(server.url)
    while (order := pipe.recv()) != "stop":
        if order == "bodies":
            pipe.send([(at, protocol.encode(request)) for at, request in seen])
        elif order == "late":
            pipe.send(_TimedHandler.late)
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
    """``n`` random SDK bots, one process each, that each answer an /act ``delay_s`` after its request line
    arrived."""

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
        """How late each delayed answer began to leave (after its ``delay_s``), in ms."""
        return [late for _due, late in self.late_marks()]

    def late_marks(self) -> list[tuple[float, float]]:
        """Per delayed answer, when it was due (``perf_counter``: the machine's monotonic clock, the same
        in every process) and how late it began to leave, in ms."""
        return self._ask("late")

    def own_ms(self) -> list[float]:
        """Per delayed /act answered so far, how long the bot's write of its answer took, in ms."""
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
