"""A watchdog's cut reaches the call it was armed for and nothing else (``bot_transport.CallCut``).

Regression, "a late cut reset the next turn": armed on a seat's connection tracker, the deadline of a
call that had already finished (a quick ``/start`` in a batch held open by another seat's slow one) shut
the seat's idle kept connection, or its next call when the watchdog thread ran late. CI saw a random bot
get a ``connection_error`` on its first turn (``test_slow_dns_at_start_forfeits_the_seat_in_time``)."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from referee.asker import Asker
from referee.bot_client import BotClient, Call, held_fault, timeout_fault
from referee.bot_transport import CallCut, ConnectionTracker, guarded_socket
from referee.call_pool import CallPool
from referee.check_report import fault_detail
from referee.faults import FaultKind
from referee.watchdog import Watchdog
from tests import bot_zoo


def _quick(req: bot_zoo.Request, sock: socket.socket) -> None:
    bot_zoo.ok(sock, {"action": 1})


class RecordingWatchdog:
    """Arms nothing: keeps each target, for the test to fire when it likes (a watchdog thread running late)."""

    def __init__(self) -> None:
        self.targets: list = []

    def arm(self, deadline: float, target) -> list:  # type: ignore[no-untyped-def]
        self.targets.append(target)
        return [target]

    @staticmethod
    def disarm(entry: list) -> None:
        entry[0] = None


def test_a_finished_calls_deadline_leaves_its_kept_connection_alone() -> None:
    watchdog = Watchdog()
    asker = Asker(CallPool(), watchdog)
    with bot_zoo.zoo_bot(lambda req, sock: time.sleep(3600)) as silent, bot_zoo.zoo_bot(_quick) as quick:
        slow_client, quick_client = BotClient(silent.url), BotClient(quick.url)
        try:
            # the silent seat's call runs in this thread until 0.4 s; the quick one is done in a millisecond,
            # and its own deadline (0.25 s) passes while the batch is still open
            first = asker.ask({0: Call(slow_client, "POST", "/start", b"{}", {}, 0.4),
                               1: Call(quick_client, "POST", "/start", b"{}", {}, 0.25, empty_ok=True)})
            assert first[0].fault is not None and first[0].fault.kind == FaultKind.TIMEOUT
            assert first[1].fault is None, first[1]
            second = asker.ask({1: Call(quick_client, "POST", "/act", b"{}", {}, 1.0)})
        finally:
            slow_client.close()
            quick_client.close()
            watchdog.close()
    assert second[1].fault is None and second[1].data == {"action": 1}
    assert quick_client.tracker.connections == 1  # its connection was never cut, so never replaced


def test_a_late_cut_for_a_finished_call_spares_the_seats_next_call() -> None:
    late = RecordingWatchdog()
    watchdog = Watchdog()
    with bot_zoo.zoo_bot(bot_zoo.slow_after_first(0.3)) as bot:
        client = BotClient(bot.url)
        try:
            first = client.call(late, "POST", "/act", b"{}", {}, 1.0)  # type: ignore[arg-type]
            assert first.fault is None
            stale_cut = late.targets[0]
            timer = threading.Timer(0.1, stale_cut.abort)  # fires while the next call waits for its answer
            timer.start()
            second = client.call(watchdog, "POST", "/act", b"{}", {}, 2.0)
            timer.join()
        finally:
            client.close()
            watchdog.close()
    assert second.fault is None, second.fault
    assert second.latency_ms >= 290  # it did wait for the bot's answer, past the stale cut
    assert client.tracker.connections == 1


def test_a_cut_still_ends_its_own_call_at_the_deadline() -> None:
    watchdog = Watchdog()
    with bot_zoo.zoo_bot(bot_zoo.slow_after_first(3600)) as bot:
        client = BotClient(bot.url)
        try:
            assert client.call(watchdog, "POST", "/act", b"{}", {}, 1.0).fault is None
            t0 = time.perf_counter()
            reply = client.call(watchdog, "POST", "/act", b"{}", {}, 0.2)
            elapsed = time.perf_counter() - t0
        finally:
            client.close()
            watchdog.close()
    assert reply.fault is not None and reply.fault.kind == FaultKind.TIMEOUT
    assert 0.2 <= elapsed < 0.3, elapsed


def test_a_call_cut_before_it_started_is_cut_as_it_starts() -> None:
    """A cut that comes while its call still resolves or connects: the call, when it does start, writes
    nothing (it was given up on). Regression: such a call wrote its request after its deadline and read a
    dripping answer on, holding the seat (a helper's review)."""
    tracker = ConnectionTracker()
    cut = CallCut(tracker)
    cut.abort()  # nothing active yet
    ours, theirs = socket.socketpair()
    try:
        tracker.started(ours, cut)
        with pytest.raises(OSError):
            ours.sendall(b"POST /act HTTP/1.1\r\n\r\n")
        theirs.settimeout(1.0)
        assert theirs.recv(100) == b""  # nothing reached the bot
    finally:
        ours.close()
        theirs.close()


def test_a_connect_after_a_slow_resolution_has_only_what_is_left_of_the_budget() -> None:
    """The resolution took 0.3 s of a 0.5 s budget; the bot's listener drops the first SYN (its accept queue
    is full, the retry comes a second later): the connect gives up at the call's deadline, not 0.5 s after
    the resolution."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    filler = socket.create_connection(("127.0.0.1", port))  # the queue's one place, taken

    def slow(host: str, p: int) -> list[str]:
        time.sleep(0.3)
        return ["127.0.0.1"]

    try:
        t0 = time.perf_counter()
        with pytest.raises(OSError):
            guarded_socket("slow.bot.test", port, 0.5, None, slow, 2.0)
        elapsed = time.perf_counter() - t0
    finally:
        filler.close()
        listener.close()
    assert 0.45 <= elapsed < 0.75, elapsed  # (0.8 before: the resolution's 0.3 s, then the whole 0.5 s again)


def test_a_seat_held_by_a_call_given_up_on_answers_its_next_call_by_its_deadline() -> None:
    watchdog = Watchdog()
    client = BotClient("http://127.0.0.1:9")  # never reached: the seat is held
    assert client.hold()  # an earlier call, given up on, still holds the seat
    replies: list = []
    caller = threading.Thread(target=lambda: replies.append(client.call(watchdog, "POST", "/act", b"{}", {}, 0.2)),
                              daemon=True)  # (waited for with a bound: unbounded, the wait would hang the suite)
    try:
        t0 = time.perf_counter()
        caller.start()
        caller.join(2.0)
        elapsed = time.perf_counter() - t0
    finally:
        client.unhold()
        caller.join(2.0)
        client.close()
        watchdog.close()
    assert elapsed < 0.5, elapsed
    reply = replies[0]
    assert reply.fault is not None and reply.fault.kind == FaultKind.TIMEOUT
    assert "not sent" in reply.fault.message
    assert reply.latency_ms >= 190


def test_a_bot_dripping_its_tls_handshake_is_cut_at_the_deadline() -> None:
    """The handshake reads from the bot before the request's socket is registered to be cut: a bot that
    sends the start of a TLS record a byte at a time, each read within the socket's timeout, must still not
    hold the call past its deadline (CPython's ``ssl`` bounds the whole handshake by the socket's timeout,
    which is what the resolution left of the budget)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    stop = threading.Event()

    def drip() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(65536)  # the ClientHello
            for byte in b"\x16\x03\x03\x40\x00" + b"\x02" * 64:  # a handshake record of 16 kB, never finished
                if stop.wait(0.05):
                    return
                try:
                    conn.sendall(bytes([byte]))
                except OSError:
                    return

    threading.Thread(target=drip, daemon=True).start()
    watchdog = Watchdog()
    client = BotClient(f"https://127.0.0.1:{port}")
    replies: list = []
    caller = threading.Thread(target=lambda: replies.append(client.call(watchdog, "POST", "/act", b"{}", {}, 0.3)),
                              daemon=True)
    try:
        t0 = time.perf_counter()
        caller.start()
        caller.join(2.0)  # (bounded: unbounded, it would run as long as the bot dripped)
        elapsed = time.perf_counter() - t0
    finally:
        stop.set()
        caller.join(5.0)
        client.close()
        watchdog.close()
        listener.close()
    assert elapsed < 0.6, elapsed
    assert replies[0].fault is not None and replies[0].fault.kind == FaultKind.TIMEOUT


def test_a_held_seat_is_told_as_such_in_a_health_report() -> None:
    """Not "no complete answer within the time limit", which tells the bot's author to answer faster."""
    detail = fault_detail(held_fault(time.perf_counter() - 0.2))
    assert detail.startswith("timeout after 20") and " ms: not sent: " in detail, detail
    assert fault_detail(timeout_fault(time.perf_counter())).endswith("no complete answer within the time limit")
