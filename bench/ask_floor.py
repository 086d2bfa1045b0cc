"""A kept-alive /act call as the referee makes it, against the floor of the same exchange: CPU and instructions.

    python -m bench.ask_floor [--loops 15]
    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=/tmp/cg.%p python -m bench.ask_floor --callgrind

``BotFleet(3)`` plays three Pajarracos matches; the /act bodies its bots were sent are then sent again, one at a
time, each bot on connections kept alive, three ways:

- ``raw``: a blocking socket, the request written at once and read until its declared length, with no parser, no
  deadline and no check: what the kernel's send, wait and receive cost this thread, and nothing else;
- ``minimal``: the referee's own request bytes (``BotConnection.message``), a non-blocking send, ``poll``, the
  response parser (``referee.http_wire``) and the answer's JSON (``parse_json``): the essentials of a call that
  one thread can make to many bots at once;
- ``referee``: ``Asker.ask`` on the seat's ``BotClient``, what the referee calls for a step: besides the above,
  the check that the bot did not close the idle connection, the call's deadline, the fence's tracker, the seat's
  hold, the size caps and the reply with its timings.

With ``--new`` every call goes on a connection of its own instead, as a match's first call to a bot does when
the match before did not seat it (``referee.connection_keeper``), three ways:

- ``raw``: connect, the request written at once and read to its length, close: the kernel's and the bot's part
  (the bot's server starts a thread for every connection it accepts);
- ``referee``: a new ``BotClient`` and ``Asker.ask`` with this call alone (made on the calling thread, cut by the
  watchdog);
- ``beside``: the same, asked together with a call on a kept connection to another bot, as a two-seat match's
  ``/start`` goes when one seat's connection was kept (the new one then goes to the call pool's thread); per pair.

Prints per call the calling thread's CPU time (median and least of ``--loops`` loops over every body) and wall
time, and with ``--callgrind`` the instructions of one loop each (``bench.referee_cost``'s counter). Judged by
nothing: it shows where a call's time goes (issue 19 goal 1: the referee against a bare round trip; goal 5:
what a match's new connection costs).
"""

from __future__ import annotations

import argparse
import select
import socket
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from bench.bot_fleet import BotFleet
from bench.referee_cost import Counter
from referee import call_pool, protocol
from referee.asker import Asker
from referee.bot_client import BotClient, Call, parse_json
from referee.call_pool import shared_pool
from referee.http_wire import ResponseParser
from referee.runner import BotSpec, play_match
from referee.watchdog import shared_watchdog


def _connect(url: str) -> socket.socket:
    where = urlsplit(url)
    sock = socket.create_connection((where.hostname or "", where.port or 80))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # (as the referee's own connections)
    return sock


def _requests(fleet: BotFleet, clients: dict[str, BotClient]) -> tuple[list[tuple[str, bytes, dict[str, str]]],
                                                                        list[tuple[str, bytes]]]:
    """The fleet's recorded /act calls (URL, body, headers) and each one's whole request as the seat's client
    writes it (``BotConnection.message``)."""
    calls = [(url, body, protocol.headers("m", 1, "", body)) for url, body in fleet.bodies()]
    return calls, [(url, clients[url].session.message("POST", "/act", body, headers)) for url, body, headers in calls]


def ways(fleet: BotFleet) -> tuple[int, dict[str, Callable[[], None]], Callable[[], None]]:
    """The number of calls a loop makes, each way's loop, and what closes the connections."""
    clients = {url: BotClient(url) for url in fleet.urls}
    calls, messages = _requests(fleet, clients)
    blocking = {url: _connect(url) for url in fleet.urls}
    loose = {url: _connect(url) for url in fleet.urls}
    for sock in loose.values():
        sock.setblocking(False)
    asker = Asker(shared_pool(), shared_watchdog())

    def raw() -> None:
        for url, message in messages:
            _raw_exchange(blocking[url], message)

    def minimal() -> None:
        for url, message in messages:
            sock = loose[url]
            sock.send(message)
            poller = select.poll()
            poller.register(sock.fileno(), select.POLLIN)
            parser = ResponseParser("POST")
            while not parser.done:
                poller.poll(5000)
                try:
                    parser.feed(sock.recv(65536))
                except BlockingIOError:
                    continue
            parse_json(bytes(parser.body))

    def referee() -> None:
        for url, body, headers in calls:
            _check(asker.ask({0: Call(clients[url], "POST", "/act", body, headers, 5.0)}))

    def close() -> None:
        for sock in [*blocking.values(), *loose.values()]:
            sock.close()
        for client in clients.values():
            client.close()

    return len(calls), {"raw": raw, "minimal": minimal, "referee": referee}, close


def new_ways(fleet: BotFleet) -> tuple[int, dict[str, Callable[[], None]], Callable[[], None]]:
    """As ``ways``, each call on a connection opened for it (``--new``)."""
    kept = {url: BotClient(url) for url in fleet.urls}
    calls, messages = _requests(fleet, kept)
    asker = Asker(shared_pool(), shared_watchdog())
    # beside each call, the nearest call of the list to another bot, on that bot's kept connection
    others = [next(calls[(i + step) % len(calls)] for step in range(1, len(calls))
                   if calls[(i + step) % len(calls)][0] != calls[i][0]) for i in range(len(calls))]

    def raw() -> None:
        for url, message in messages:
            with _connect(url) as sock:
                _raw_exchange(sock, message)

    def referee() -> None:
        for url, body, headers in calls:
            client = BotClient(url)
            try:
                _check(asker.ask({0: Call(client, "POST", "/act", body, headers, 5.0)}))
            finally:
                client.close()

    def beside() -> None:
        for (url, body, headers), (other, other_body, other_headers) in zip(calls, others, strict=True):
            client = BotClient(url)
            try:
                _check(asker.ask({0: Call(client, "POST", "/act", body, headers, 5.0),
                                  1: Call(kept[other], "POST", "/act", other_body, other_headers, 5.0)}))
            finally:
                client.close()

    def close() -> None:
        for client in kept.values():
            client.close()

    return len(calls), {"raw": raw, "referee": referee, "beside": beside}, close


def _check(replies: dict[int, Any]) -> None:
    for reply in replies.values():
        if reply.fault is not None:
            raise RuntimeError(f"the referee's call failed: {reply.fault}")


def _raw_exchange(sock: socket.socket, message: bytes) -> None:
    """The request written at once on a blocking socket, its answer read to the length it declares."""
    sock.sendall(message)
    data = b""
    while (end := data.find(b"\r\n\r\n")) < 0 or len(data) < end + 4 + _length(data[:end]):
        data += sock.recv(65536)


def _length(head: bytes) -> int:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    raise ValueError("the bench's bots declare every answer's length")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loops", type=int, default=15, help="loops over every body, each way (CPU medians)")
    parser.add_argument("--callgrind", action="store_true", help="read callgrind's instruction counters (one loop)")
    parser.add_argument("--new", action="store_true", help="every call on a new connection (raw, referee, beside)")
    args = parser.parse_args(argv)
    if args.callgrind:
        call_pool.IDLE_S = 1e6  # (a pool thread that ended would take its count with it: bench.referee_cost)
    counter = Counter(args.callgrind)
    with BotFleet(3) as fleet:
        for seed in range(3):
            play_match("pajarracos", [BotSpec(u) for u in fleet.urls], seed=seed)
        n, loops, close = (new_ways if args.new else ways)(fleet)
        try:
            for loop in loops.values():  # every connection opened and warm
                loop()
            if args.callgrind:
                counter.switch(True)
                first = counter.read()
                ask = counter.read() - first  # what reading the counter costs
                for name, loop in loops.items():
                    before = counter.read()
                    loop()
                    print(f"{name:8s} {(counter.read() - before - ask) / n / 1000:7.1f} k instructions per call")
                counter.switch(False)
                return 0
            cpu: dict[str, list[float]] = {name: [] for name in loops}
            wall: dict[str, list[float]] = {name: [] for name in loops}
            for _ in range(args.loops):  # the ways in turn, so that each sees the same machine
                for name, loop in loops.items():
                    c0, w0 = time.thread_time(), time.perf_counter()
                    loop()
                    cpu[name].append((time.thread_time() - c0) / n * 1e6)
                    wall[name].append((time.perf_counter() - w0) / n * 1e6)
        finally:
            close()
    what = "on a new connection each" if args.new else "on kept connections"
    print(f"{n} /act calls a loop, {what}, {args.loops} loops each way; per call, this thread's CPU and the wall (us):")
    for name in loops:
        print(f"  {name:8s} CPU median {statistics.median(cpu[name]):6.1f} (least {min(cpu[name]):5.1f})   "
              f"wall median {statistics.median(wall[name]):6.1f} (least {min(wall[name]):5.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
