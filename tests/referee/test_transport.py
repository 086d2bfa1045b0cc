"""The referee's own kept-alive transport (issue 19): a connection is reused while the bot keeps it,
replaced when the bot closed it, and simultaneous calls run at once on threads kept between matches."""

from __future__ import annotations

import socket
import threading
import time

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
