"""The next match's connections, opened while the match before is recorded (``referee.connect_ahead``): the bot
accepts before the match starts and ``/start`` goes on that connection, and nothing a match guarantees changes
(the URL guard before any connection, the faults a bot's connection earns, the keeper's rule)."""

from __future__ import annotations

import socket
import threading
import time
import types

import pytest

from referee import bot_addresses, connect_ahead
from referee.bot_transport import resolve
from referee.connect_ahead import open_ahead
from referee.connection_keeper import ConnectionKeeper, connection_key
from referee.protocol import TimeControls
from referee.runner import BotSpec, play_match
from referee.url_guard import AddressPolicy
from tests import bot_zoo

QUICK = TimeControls(decision_ms=2000, start_ms=2000)
LOOPBACK = AddressPolicy(allow_loopback=True)
STRICT = AddressPolicy(allow_loopback=False)


def _play(bots, keeper, seed, guard=LOOPBACK, tc=QUICK, resolver=resolve) -> dict:  # type: ignore[no-untyped-def]
    return play_match("piranha-pedro", [BotSpec(b.url) for b in bots], seed=seed, time_controls=tc, guard=guard,
                      keeper=keeper, resolver=resolver)


def _until(condition, within_s: float = 3.0) -> bool:  # type: ignore[no-untyped-def]
    ends = time.monotonic() + within_s
    while not condition():
        if time.monotonic() > ends:
            return False
        time.sleep(0.005)
    return True


def _faults(replay: dict) -> list[tuple[int, str, str, str, int]]:
    return [(f["seat"], f["path"], f["kind"], f["message"], f["turn"]) for f in replay["faults"]]


def test_the_next_matchs_bots_accept_before_it_starts_and_its_start_goes_on_that_connection(spy) -> None:
    with bot_zoo.zoo_bot(bot_zoo.polite) as a, bot_zoo.zoo_bot(bot_zoo.polite) as b, \
            bot_zoo.zoo_bot(bot_zoo.polite) as c, ConnectionKeeper() as keeper:
        _play([a, b], keeper, 1)
        assert open_ahead(keeper, [a.url, c.url], LOOPBACK) == []  # IP literals: no thread to resolve them
        assert _until(lambda: c.connections == 1) and c.paths() == []  # accepted before the match: nothing sent
        assert len(spy.ahead) == 1  # a's idle connection is held already: none opened
        replay = _play([a, c], keeper, 2)
        assert replay["faults"] == [] and c.paths()[0] == "/start"
        assert (a.connections, b.connections, c.connections) == (1, 1, 1)  # /start went on the one opened ahead
        assert keeper.reused == 2 and len(spy.attempts) == 3
        assert len(keeper) == 2  # b's was closed as the match started, a's and c's kept after it


def test_a_url_the_guard_refuses_is_never_connected_ahead_and_start_still_records_the_refusal(spy) -> None:
    with bot_zoo.zoo_bot(bot_zoo.polite) as a, bot_zoo.zoo_bot(bot_zoo.polite) as b, ConnectionKeeper() as keeper:
        named = f"http://bot.test:{a.server_address[1]}"
        threads = open_ahead(keeper, [a.url, named], STRICT, resolver=lambda host, port: ["127.0.0.1"])
        for thread in threads:
            thread.join(5)
        assert len(threads) == 2 and spy.attempts == [] and len(keeper) == 0 and a.connections == 0  # (a resolver
        # of its own resolves literals too, as at /start)
        replay = _play([a, b], keeper, 1, guard=STRICT)
        assert {f["kind"] for f in replay["faults"]} == {"unsafe_url"} and spy.attempts == []


def test_a_refused_connection_ahead_ends_in_the_fault_a_match_without_it_records() -> None:
    dead = types.SimpleNamespace(url=f"http://127.0.0.1:{bot_zoo.closed_port()}")
    with bot_zoo.zoo_bot(bot_zoo.polite) as b:
        with ConnectionKeeper() as keeper:
            open_ahead(keeper, [dead.url], LOOPBACK)
            assert len(keeper) == 1  # started, not waited for: the refusal comes later
            ahead = _play([dead, b], keeper, 1)
        without = _play([dead, b], None, 1)
    assert _faults(ahead) == _faults(without) and _faults(without)[0][:3] == (0, "/start", "connection_error")
    assert ahead["result"] == without["result"]


@pytest.fixture
def unanswered_port():  # type: ignore[no-untyped-def]
    """A port whose listener's backlog is full: a connection to it is never made (its SYN is dropped)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    filling = socket.create_connection(("127.0.0.1", port))
    yield port
    filling.close()
    listener.close()


def test_a_connection_ahead_still_being_made_is_a_start_timeout_as_a_new_one_is(unanswered_port) -> None:
    """A connect the bot never completes waits within /start's deadline either way, and times out the same."""
    silent = types.SimpleNamespace(url=f"http://127.0.0.1:{unanswered_port}")
    tc = TimeControls(decision_ms=100, start_ms=300)
    with bot_zoo.zoo_bot(bot_zoo.polite) as b:
        with ConnectionKeeper() as keeper:
            open_ahead(keeper, [silent.url], LOOPBACK)
            started = time.perf_counter()
            ahead = _play([silent, b], keeper, 1, tc=tc)
            start_s = time.perf_counter() - started
        without = _play([silent, b], None, 1, tc=tc)
    first = [(seat, path, kind) for seat, path, kind, _message, _turn in _faults(ahead)][:1]
    assert first == [(0, "/start", "timeout")]
    assert [f[:3] for f in _faults(ahead)] == [f[:3] for f in _faults(without)]
    assert start_s < 5  # (the match itself: every call bounded by its deadline)


class _SlowName:
    """A resolver that answers once ``release`` is set."""

    def __init__(self) -> None:
        self.release = threading.Event()

    def __call__(self, host: str, port: int) -> list[str]:
        self.release.wait(5)
        return ["127.0.0.1"]


def test_a_name_resolved_after_the_next_match_started_is_never_connected(spy) -> None:
    with bot_zoo.zoo_bot(bot_zoo.polite) as a, ConnectionKeeper() as keeper:
        resolver = _SlowName()
        threads = open_ahead(keeper, [f"http://bot.test:{a.server_address[1]}"], LOOPBACK, resolver=resolver)
        keeper.drop_idle()  # the match it was opened for started without it
        resolver.release.set()
        for thread in threads:
            thread.join(5)
        assert spy.attempts == [] and len(keeper) == 0 and a.connections == 0


def test_a_name_resolved_in_time_is_connected_ahead_and_taken_by_the_match(spy) -> None:
    with bot_zoo.zoo_bot(bot_zoo.polite) as a, bot_zoo.zoo_bot(bot_zoo.polite) as b, ConnectionKeeper() as keeper:
        resolver = _SlowName()
        resolver.release.set()
        named = types.SimpleNamespace(url=f"http://bot.test:{a.server_address[1]}")
        for thread in open_ahead(keeper, [named.url], LOOPBACK, resolver=resolver):
            thread.join(5)
        assert keeper.holds(connection_key(named.url, LOOPBACK, resolver)) and _until(lambda: a.connections == 1)
        replay = _play([named, b], keeper, 1, resolver=resolver)
        assert replay["faults"] == [] and a.connections == 1 and spy.attempts[0] == ("127.0.0.1", a.server_address[1])


def test_https_and_malformed_urls_are_left_to_start(spy) -> None:
    with ConnectionKeeper() as keeper:
        urls = ["https://127.0.0.1:9", "ftp://127.0.0.1:9", "not a url", "http://127.0.0.1:99999", None]
        assert open_ahead(keeper, urls, LOOPBACK) == []  # type: ignore[list-item]
        assert spy.attempts == [] and len(keeper) == 0


def test_nothing_a_resolver_raises_escapes_into_the_record(spy) -> None:
    """Only a saving: the match just played is recorded after it whatever happens here (an error in its thread
    would also fail the test run: warnings are errors)."""
    def broken(host: str, port: int) -> list[str]:
        raise RuntimeError("resolver bug")

    with ConnectionKeeper() as keeper:
        threads = open_ahead(keeper, ["http://bot.test:9", "http://other.test:9"], LOOPBACK, resolver=broken)
        for thread in threads:
            thread.join(5)
        assert len(threads) == 2 and spy.attempts == [] and len(keeper) == 0


def test_a_connection_given_for_a_window_that_closed_is_closed_not_kept() -> None:
    keeper = ConnectionKeeper()
    early, late = socket.socketpair(), socket.socketpair()
    window = keeper.window()
    keeper.give("x", early[0], window)
    assert keeper.holds("x") and not keeper.holds("y")
    keeper.drop_idle()  # the next match started
    keeper.give("x", late[0], window)
    assert late[0].fileno() == -1 and early[0].fileno() == -1 and len(keeper) == 0
    keeper.give("x", late[1], keeper.window())  # the window now open
    assert keeper.take("x") == (late[1], True)
    keeper.close()
    for pair in (early, late):
        for end in pair:
            end.close()


class _HangUpOnFirstStart:
    """Reads the first /start it is sent and hangs up without an answer; a good bot after that."""

    def __init__(self) -> None:
        self.starts = 0
        self.lock = threading.Lock()

    def __call__(self, req: bot_zoo.Request, sock: socket.socket) -> None:
        if req.path == "/start":
            with self.lock:
                self.starts += 1
                first = self.starts == 1
            if first:
                sock.shutdown(socket.SHUT_RDWR)
                return
        bot_zoo.polite(req, sock)


def test_ahead_regression_a_connection_opened_ahead_was_given_a_kept_connections_second_start() -> None:
    """Review finding: a connection opened ahead counted as kept from an earlier match, so a bot that hung up on
    /start got it again on a new connection (and played), where the same bot without it forfeited at once."""
    outcomes = []
    for ahead in (False, True):
        hangs_up = _HangUpOnFirstStart()
        with bot_zoo.zoo_bot(hangs_up) as a, bot_zoo.zoo_bot(bot_zoo.polite) as b, ConnectionKeeper() as keeper:
            if ahead:
                open_ahead(keeper, [a.url], LOOPBACK)
                assert _until(lambda: a.connections == 1)
            replay = _play([a, b], keeper, 1)
        faults = [(f[0], f[1], f[2], f[3].split(" (talking to")[0]) for f in _faults(replay)]  # (ports differ)
        outcomes.append((faults, replay["result"]["forfeited"], hangs_up.starts))
    assert outcomes[0] == outcomes[1] and outcomes[0][1] == [0] and outcomes[0][2] == 1


def test_names_resolved_ahead_take_slots_of_their_own_not_those_of_start(spy) -> None:
    """Review finding: a bot whose name server never answers held two of the process's resolution slots a match
    (one ahead, one at /start), so other bots' names could be refused sooner; ahead ones have slots of their own."""
    shared = bot_addresses._resolving._value  # type: ignore[attr-defined]
    resolver = _SlowName()
    with ConnectionKeeper() as keeper:
        urls = [f"http://bot{i}.test:9" for i in range(connect_ahead.MAX_RESOLVING_AHEAD + 2)]
        threads = open_ahead(keeper, urls, LOOPBACK, resolver=resolver)
        assert _until(lambda: connect_ahead._resolving_ahead._value == 0)  # type: ignore[attr-defined]
        assert bot_addresses._resolving._value == shared  # type: ignore[attr-defined]
        assert _until(lambda: sum(t.is_alive() for t in threads) == connect_ahead.MAX_RESOLVING_AHEAD)
        keeper.drop_idle()
        resolver.release.set()
        for thread in threads:
            thread.join(5)
    assert spy.attempts == [] and connect_ahead._resolving_ahead._value == connect_ahead.MAX_RESOLVING_AHEAD  # type: ignore[attr-defined]
