"""The referee's own kept-alive transport (issue 19): a connection is reused while the bot keeps it,
replaced when the bot closed it, and simultaneous calls run at once on threads kept between matches."""

from __future__ import annotations

import errno
import socket
import threading
import time

from referee import bot_transport
from referee.bot_client import BotClient
from referee.call_pool import CallPool
from referee.watchdog import Watchdog
from tests import bot_zoo
from tests.connection_spy import root_calls


def test_one_connection_serves_every_call_to_a_bot_that_keeps_it(spy, random_bots) -> None:
    replies = root_calls(BotClient(random_bots[0].url), 5)
    assert all(r.fault is None and r.data["apiversion"] == "1" for r in replies)
    assert len(spy.attempts) == 1


def answer_then_hang_up(req: bot_zoo.Request, sock: socket.socket) -> None:
    """A correct answer, then the bot closes the kept-alive connection while it is idle."""
    bot_zoo.polite(req, sock)
    time.sleep(0.05)
    sock.shutdown(socket.SHUT_RDWR)


def test_a_connection_the_bot_closed_while_idle_is_replaced_not_a_fault(spy) -> None:
    with bot_zoo.zoo_bot(answer_then_hang_up) as zoo:
        client = BotClient(zoo.url)
        watchdog = Watchdog()
        try:
            first = client.call(watchdog, "GET", "/", None, {}, 2.0)
            time.sleep(0.2)  # the bot hangs up meanwhile
            second = client.call(watchdog, "GET", "/", None, {}, 2.0)
        finally:
            client.close()
            watchdog.close()
    assert first.fault is None and second.fault is None, (first, second)
    assert len(spy.attempts) == 2


def _settle(pool: CallPool, idle: int) -> None:
    deadline = time.monotonic() + 2
    while len(pool._idle) < idle and time.monotonic() < deadline:
        time.sleep(0.01)


def test_the_call_pool_never_queues_and_keeps_its_threads() -> None:
    pool = CallPool()
    idents: list[int] = []

    def work() -> None:
        idents.append(threading.get_ident())
        time.sleep(0.2)

    for _round in range(2):
        started = time.perf_counter()
        futures = [pool.submit(work) for _ in range(8)]
        for future in futures:
            future.result(timeout=5)
        assert time.perf_counter() - started < 0.6  # eight at once, not one after another
        _settle(pool, 8)
    assert len(idents) == 16 and len(set(idents)) == 8  # the second round ran on the first round's threads


def test_a_turn_given_up_on_never_reaches_the_bot_later() -> None:
    """Regression (cluster test, worker partition): a call that timed out was closed gracefully, so the
    kernel kept retransmitting the part of the request the bot had not received yet, and the bot got
    that turn when the cut link healed, after the match had been replayed elsewhere and recorded. Here
    the bot reads nothing until the call is given up on (a full receive window stands in for the cut)."""
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    body = b"x" * 12_000  # more than the bot's receive buffer holds, less than the referee's send buffer
    client = BotClient(f"http://127.0.0.1:{server.getsockname()[1]}")
    watchdog = Watchdog()
    try:
        reply = client.call(watchdog, "POST", "/act", body, {}, 0.3)
        assert reply.fault is not None and reply.fault.kind.value == "timeout"
        conn, _ = server.accept()
        received, reset = 0, False
        conn.settimeout(2)
        try:
            while chunk := conn.recv(65536):
                received += len(chunk)
        except ConnectionResetError:
            reset = True
        conn.close()
        assert reset and received < len(body), f"the bot got {received} bytes of the abandoned request"
    finally:
        client.close()
        watchdog.close()
        server.close()


class _NoRouteFor:
    """``socket.create_connection`` as a worker's kernel answers it just after its link healed: "No route
    to host" for the first ``failures`` attempts, then a real connection."""

    def __init__(self, failures: int, code: int = errno.EHOSTUNREACH) -> None:
        self.failures, self.code, self.attempts = failures, code, 0
        self.real = socket.create_connection

    def __call__(self, address, timeout=None):  # type: ignore[no-untyped-def]
        self.attempts += 1
        if self.attempts <= self.failures:
            raise OSError(self.code, "No route to host")
        return self.real(address, timeout)


def test_no_route_regression_a_worker_just_healed_forfeited_every_seat_at_start(monkeypatch) -> None:
    """Found by the cluster test (worker partition): the first connections of a worker whose link had
    just healed failed at once with "No route to host", so every seat forfeited at ``/start`` and the
    match went void. Connecting is now tried again until the deadline."""
    fake = _NoRouteFor(failures=3)
    monkeypatch.setattr(bot_transport.socket, "create_connection", fake)
    with bot_zoo.zoo_bot(bot_zoo.polite) as bot:
        client = BotClient(bot.url)
        reply = client.call(Watchdog(), "POST", "/start", b"{}", {}, 2.0, empty_ok=True)
        client.close()
    assert reply.fault is None and fake.attempts == 4


def test_a_host_that_stays_unreachable_fails_by_the_deadline(monkeypatch) -> None:
    fake = _NoRouteFor(failures=10**6)
    monkeypatch.setattr(bot_transport.socket, "create_connection", fake)
    started = time.perf_counter()
    client = BotClient("http://127.0.0.1:9")
    reply = client.call(Watchdog(), "POST", "/start", b"{}", {}, 0.5, empty_ok=True)
    took = time.perf_counter() - started
    assert reply.fault is not None and "No route to host" in reply.fault.message
    assert 0.35 < took < 2.0, took  # tried until the deadline, and no longer than about it


def test_a_refused_connection_is_not_tried_again(monkeypatch) -> None:
    fake = _NoRouteFor(failures=10**6, code=errno.ECONNREFUSED)
    monkeypatch.setattr(bot_transport.socket, "create_connection", fake)
    reply = BotClient("http://127.0.0.1:9").call(Watchdog(), "POST", "/start", b"{}", {}, 2.0, empty_ok=True)
    assert reply.fault is not None and fake.attempts == 1
