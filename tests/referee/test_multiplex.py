"""Calls on kept-alive connections carried by one thread (referee/multiplex.py): a slow or silent seat
delays nobody else, every call ends by its own deadline, and a connection is kept only when it may be."""

from __future__ import annotations

import socket
import threading
import time

from referee.asker import Asker
from referee.bot_client import BotClient, Call
from referee.call_pool import CallPool
from referee.faults import FaultKind
from referee.watchdog import Watchdog
from tests import bot_zoo


def _ask(asker: Asker, clients: list[BotClient], budget_s: float) -> dict:
    return asker.ask({i: Call(c, "POST", "/act", b"{}", {}, budget_s) for i, c in enumerate(clients)})


def test_a_silent_seat_delays_nobody_and_is_cut_at_its_deadline() -> None:
    watchdog = Watchdog()
    asker = Asker(CallPool(), watchdog)
    with bot_zoo.zoo_bot(lambda req, sock: bot_zoo.ok(sock, {"action": 1})) as fast, \
            bot_zoo.zoo_bot(bot_zoo.slow_after_first(3600)) as silent:
        clients = [BotClient(fast.url), BotClient(silent.url)]
        try:
            first = _ask(asker, clients, 2.0)  # new connections: the threaded path
            assert all(r.fault is None for r in first.values()), first
            started = time.perf_counter()
            second = _ask(asker, clients, 0.3)  # kept connections: one thread, one poll
            elapsed = time.perf_counter() - started
        finally:
            for client in clients:
                client.close()
            watchdog.close()
    assert second[0].fault is None and second[0].data == {"action": 1}
    assert second[0].latency_ms < 200, second[0]  # not held up by the silent seat's 300 ms
    assert second[1].fault is not None and second[1].fault.kind == FaultKind.TIMEOUT
    assert 0.3 <= elapsed < 0.4
    assert clients[0].tracker.connections == 1  # the answered seat kept its connection
    assert clients[1].session.kept_socket() is None  # the cut one did not


def test_a_kept_connection_closed_by_the_bot_is_replaced_not_a_fault() -> None:
    def answer_then_hang_up(req: bot_zoo.Request, sock: socket.socket) -> None:
        bot_zoo.ok(sock, {"action": 1})
        sock.shutdown(socket.SHUT_RDWR)

    watchdog = Watchdog()
    asker = Asker(CallPool(), watchdog)
    with bot_zoo.zoo_bot(answer_then_hang_up) as zoo:
        client = BotClient(zoo.url)
        try:
            replies = []
            for _ in range(3):
                replies.append(_ask(asker, [client], 2.0)[0])
                time.sleep(0.05)  # the bot hangs up meanwhile
        finally:
            client.close()
            watchdog.close()
    assert all(r.fault is None for r in replies), replies
    assert client.tracker.connections == 3


def test_a_call_that_cannot_be_written_is_a_fault_and_leaves_the_seat_free() -> None:
    watchdog = Watchdog()
    asker = Asker(CallPool(), watchdog)
    with bot_zoo.zoo_bot(lambda req, sock: bot_zoo.ok(sock, {"action": 1})) as zoo:
        client = BotClient(zoo.url)
        try:
            assert _ask(asker, [client], 2.0)[0].fault is None  # the connection is now kept
            bad = asker.ask({0: Call(client, "POST", "/act", b"{}", {"X-Evil": "a\r\nInjected: 1"}, 2.0)})[0]
            again = _ask(asker, [client], 2.0)[0]
        finally:
            client.close()
            watchdog.close()
    assert bad.fault is not None and bad.fault.kind == FaultKind.CONNECTION, bad
    assert again.fault is None, again  # the seat was not left held, and a new connection serves it
    assert client.tracker.connections == 2


def test_a_turn_given_up_on_a_kept_connection_never_reaches_the_bot_later() -> None:
    """The one-thread path resets a connection it gives up on, as the threaded path does (main's
    regression from the cluster test's worker partition): the bot answers one call, then reads nothing
    more until the next call, sent on the kept connection, has timed out."""
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    given_up = threading.Event()
    outcome: dict[str, object] = {}

    def bot() -> None:
        conn, _ = server.accept()
        conn.settimeout(5)
        request = b""
        while b"\r\n\r\n" not in request:
            request += conn.recv(4096)
        conn.sendall(bot_zoo.http_response(200, b'{"action": 1}'))
        given_up.wait(5)
        received, reset = 0, False
        try:
            while chunk := conn.recv(65536):
                received += len(chunk)
        except ConnectionResetError:
            reset = True
        outcome.update(received=received, reset=reset)
        conn.close()

    thread = threading.Thread(target=bot, daemon=True)
    thread.start()
    watchdog = Watchdog()
    asker = Asker(CallPool(), watchdog)
    client = BotClient(f"http://127.0.0.1:{server.getsockname()[1]}")
    body = b"x" * 12_000  # more than the bot's receive buffer holds, less than the referee's send buffer
    try:
        assert asker.ask({0: Call(client, "GET", "/", None, {}, 2.0)})[0].fault is None
        reply = asker.ask({0: Call(client, "POST", "/act", body, {}, 0.3)})[0]
        given_up.set()
        thread.join(5)
    finally:
        client.close()
        watchdog.close()
        server.close()
    assert reply.fault is not None and reply.fault.kind == FaultKind.TIMEOUT, reply
    assert client.tracker.connections == 1  # the second call did go over the kept connection
    assert outcome["reset"] and outcome["received"] < len(body), outcome


def test_a_complete_answer_reads_the_same_on_both_paths_its_head_time_included() -> None:
    """A kept connection's reply is built once, with the time its head came in (``complete_reply``'s
    ``headers_ms``): the fields a caller reads (the checker's Nagle test reads ``headers_ms``) are those the
    threaded path gives for the same answer, a ``/start`` or ``/end`` answer as well as an action."""
    watchdog = Watchdog()
    asker = Asker(CallPool(), watchdog)
    with bot_zoo.zoo_bot(bot_zoo.polite) as zoo:
        client = BotClient(zoo.url)
        try:
            calls = [Call(client, "POST", path, b'{"legal_actions": [7]}', {}, 2.0, empty_ok=path != "/act")
                     for path in ("/start", "/act", "/end", "/act")]
            replies = [asker.ask({0: call})[0] for call in calls]  # the first opens the connection: threaded
        finally:
            client.close()
            watchdog.close()
    assert client.tracker.connections == 1  # so every call after the first was carried by ``multiplex``
    threaded, carried = replies[0], replies[1:]
    for reply in replies:
        assert reply.fault is None and reply.status == 200, reply
        assert reply.headers_ms is not None and 0 < reply.headers_ms <= reply.latency_ms, reply
    assert (carried[1].data, carried[1].body_bytes) == (threaded.data, threaded.body_bytes)
    assert carried[0].data == {"action": 7} and carried[0].body_bytes == carried[2].body_bytes
