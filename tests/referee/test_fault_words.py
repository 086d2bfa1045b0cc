"""One wording per fault on both transport paths: the threaded path (``BotClient.call``, http.client) and
the multiplexed one (``referee.multiplex``, kept-alive connections carried by one thread) give a bot's
owner the same fault, in the same words, for the same misbehaviour."""

from __future__ import annotations

import http.client
import socket

import pytest

from referee import multiplex
from referee.bot_client import BotClient, Call, connection_message
from referee.faults import Fault
from referee.watchdog import Watchdog
from tests import bot_zoo
from tests.reliability.test_hostile_zoo import ZOO

ACT = b'{"legal_actions": [1]}'  # what the zoo's slow bots answer with a legal action from


def _raw(answer: bytes) -> bot_zoo.Behaviour:
    """Answers /act with these bytes, then hangs up."""

    def handler(req: bot_zoo.Request, sock: socket.socket) -> None:
        if req.path != "/act":
            bot_zoo.polite(req, sock)
            return
        sock.sendall(answer)
        sock.shutdown(socket.SHUT_RDWR)

    return handler


CHUNKS = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
CUT_SHORT = {
    "chunked_body_cut_after_4_kb": _raw(CHUNKS + b"1000\r\n" + b"x" * 4096 + b"\r\n1000\r\n" + b"y" * 100),
    "chunked_body_cut_in_its_first_chunk": _raw(CHUNKS + b"10\r\n0123"),
    "declared_body_cut_after_1_kb": _raw(b"HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n" + b"x" * 1000),
    "status_500_body_cut_short": _raw(b"HTTP/1.1 500 Oops\r\nContent-Length: 5000\r\n\r\n" + b"x" * 50),
    "status_500_chunked_body_cut_short": _raw(b"HTTP/1.1 500 Oops\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nab"),
    "head_cut_in_a_header": _raw(b"HTTP/1.1 200 OK\r\nContent-Type: appl"),
    "head_cut_after_the_status_line": _raw(b"HTTP/1.1 200 OK\r\n"),
}
BEHAVIOURS = {name: handler for name, (handler, kind) in ZOO.items()
              if kind not in ("wrong_shape", "illegal_action", "wrong_turn")} | CUT_SHORT  # the referee judges those


def _fault(url: str, watchdog: Watchdog, multiplexed: bool) -> Fault:
    """The fault of one /act call on a kept-alive connection (a polite /start first), by either path."""
    client = BotClient(url)
    try:
        assert client.call(watchdog, "POST", "/start", b"{}", {}, 2.0, empty_ok=True).fault is None
        if multiplexed:
            kept, rest = multiplex.claim({0: Call(client, "POST", "/act", ACT, {}, 0.3)})
            assert kept and not rest, "the kept connection carries the call"
            reply = multiplex.carry(kept)[0]
        else:
            reply = client.call(watchdog, "POST", "/act", ACT, {}, 0.3)
    finally:
        client.close()
    assert reply.fault is not None
    return reply.fault


@pytest.mark.parametrize("behaviour", sorted(BEHAVIOURS))
def test_regression_the_two_paths_worded_one_fault_differently(behaviour: str) -> None:
    """A chunked answer cut short read "IncompleteRead(4096 bytes read)" on the threaded path and
    "IncompleteRead(200 bytes read)" on the multiplexed one (each counted what its own reader held), and
    a 500 whose body was cut short was an http_status fault on one path, a connection_error on the other,
    and a head cut short was bad_json (http.client took the end of the stream for the end of the head)
    where the other path said the connection closed. Every misbehaviour now gives the same fault kind and
    message on both."""
    watchdog = Watchdog()
    try:
        with bot_zoo.zoo_bot(BEHAVIOURS[behaviour]) as zoo:
            threaded, multiplexed = _fault(zoo.url, watchdog, False), _fault(zoo.url, watchdog, True)
    finally:
        watchdog.close()
    assert (threaded.kind, threaded.message) == (multiplexed.kind, multiplexed.message)


def test_an_answer_cut_short_says_what_was_due_never_what_the_transport_had_read() -> None:
    for partial in (b"x" * 200, b"x" * 4096, b""):
        assert connection_message(http.client.IncompleteRead(partial, 4000), "h:1") == (
            "IncompleteRead: the connection closed in the middle of the answer, 4000 more bytes expected"
            " (talking to h:1)")
        assert connection_message(http.client.IncompleteRead(partial), "h:1") == (
            "IncompleteRead: the connection closed in the middle of the answer (talking to h:1)")
