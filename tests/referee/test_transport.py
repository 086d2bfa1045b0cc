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
