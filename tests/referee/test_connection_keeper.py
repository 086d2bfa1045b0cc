"""Connections kept from one match to the next (``referee.connection_keeper``): what is saved, and that nothing
a match guarantees is given up for it (the URL guard, no reuse of a doubtful connection, no fault that is not
the bot's)."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from referee.bot_transport import resolve
from referee.connection_keeper import ConnectionKeeper
from referee.fence import Fence, FenceCrossed
from referee.protocol import TimeControls
from referee.runner import BotSpec, play_match
from referee.url_guard import AddressPolicy
from tests import bot_zoo

QUICK = TimeControls(decision_ms=2000, start_ms=2000)
LOOPBACK = AddressPolicy(allow_loopback=True)


def _pair() -> tuple[socket.socket, socket.socket]:
    return socket.socketpair()


def test_the_keeper_hands_back_the_latest_connection_of_a_key_and_keeps_within_its_bound() -> None:
    keeper = ConnectionKeeper(most=3)
    a, b, c, d = (_pair() for _ in range(4))
    for key, pair in zip("xxyx", (a, b, c, d), strict=True):
        keeper.give(key, pair[0])
    assert a[0].fileno() == -1 and len(keeper) == 3  # a fourth: the least recently given goes
    assert keeper.take("x") == (d[0], False)  # the latest first: the least likely closed by an idle timeout
    assert keeper.take("z") is None and keeper.reused == 1
    keeper.drop_idle()  # a match started without them: closed
    assert b[0].fileno() == -1 and c[0].fileno() == -1 and len(keeper) == 0
    keeper.give("x", d[0])
    keeper.close()
    assert d[0].fileno() == -1
    e = _pair()
    keeper.give("x", e[0])  # given after the batch ended: closed at once
    assert e[0].fileno() == -1 and len(keeper) == 0
    for pair in (a, b, c, d, e):
        for end in pair:
            end.close()


def test_a_connection_idle_longer_than_the_limit_is_closed_not_handed_out() -> None:
    """A server's or a middlebox's idle timeout may have ended it without a word (a silent drop would make
    /start time out, and the seat forfeit): past ``max_idle_s`` a new connection is opened instead."""
    now = [100.0]
    keeper = ConnectionKeeper(max_idle_s=1.0, clock=lambda: now[0])
    old, fresh = _pair(), _pair()
    keeper.give("x", old[0])
    now[0] += 0.6
    keeper.give("x", fresh[0])
    now[0] += 0.6  # the first has been idle 1.2 s, the second 0.6 s
    assert keeper.take("x") == (fresh[0], False) and old[0].fileno() == -1
    now[0] += 5
    keeper.give("y", old[1])
    now[0] += 1.5
    assert keeper.take("y") is None and old[1].fileno() == -1 and len(keeper) == 0
    for pair in (old, fresh):
        for end in pair:
            end.close()


def test_the_keeper_closes_the_least_recently_given_beyond_its_total() -> None:
    keeper = ConnectionKeeper(most=2)
    pairs = [_pair() for _ in range(3)]
    for key, pair in zip("abc", pairs, strict=True):
        keeper.give(key, pair[0])
    assert pairs[0][0].fileno() == -1
    assert keeper.take("b") == (pairs[1][0], False) and keeper.take("c") == (pairs[2][0], False)
    for pair in pairs:
        for end in pair:
            end.close()


def _play(servers: list[bot_zoo.ZooServer], keeper: ConnectionKeeper, seed: int, guard=LOOPBACK,
          tc: TimeControls = QUICK) -> dict:
    return play_match("piranha-pedro", [BotSpec(s.url) for s in servers], seed=seed, time_controls=tc,
                      guard=guard, keeper=keeper)


def test_matches_that_share_a_keeper_open_one_connection_per_seat_in_all() -> None:
    with bot_zoo.zoo_bot(bot_zoo.polite) as a, bot_zoo.zoo_bot(bot_zoo.polite) as b, ConnectionKeeper() as keeper:
        replays = [_play([a, b], keeper, seed) for seed in range(4)]
        assert [r["faults"] for r in replays] == [[]] * 4
        assert (a.connections, b.connections) == (1, 1)
        assert keeper.reused == 6 and len(keeper) == 2
        assert a.paths().count("/start") == 4
    without = []
    with bot_zoo.zoo_bot(bot_zoo.polite) as a, bot_zoo.zoo_bot(bot_zoo.polite) as b:
        without = [play_match("piranha-pedro", [BotSpec(a.url), BotSpec(b.url)], seed=s, time_controls=QUICK)
                   for s in range(4)]
        assert (a.connections, b.connections) == (4, 4)  # without a keeper: a new one per match, as before
    assert [_actions(r) for r in replays] == [_actions(r) for r in without]


def _actions(replay: dict) -> list:
    return [[(d["seat"], d["action"]) for d in step["decisions"]] for step in replay["steps"]]


def test_a_kept_connection_is_not_reused_under_a_stricter_guard(spy) -> None:
    """A connection opened under one guard is never handed to a match played under another: the stricter
    guard refuses the bot before any connection is attempted, as it would without a keeper. An equal guard
    (the worker builds one per match) reuses it."""
    with bot_zoo.zoo_bot(bot_zoo.polite) as a, bot_zoo.zoo_bot(bot_zoo.polite) as b, ConnectionKeeper() as keeper:
        _play([a, b], keeper, 1)
        again = _play([a, b], keeper, 2, guard=AddressPolicy(allow_loopback=True))  # equal, not the same
        assert again["faults"] == [] and len(spy.attempts) == 2 and len(keeper) == 2
        strict = _play([a, b], keeper, 3, guard=AddressPolicy(allow_loopback=False))
        assert {f["kind"] for f in strict["faults"]} == {"unsafe_url"}
        assert len(spy.attempts) == 2 and a.paths().count("/start") == 2  # nothing sent, nothing connected
        assert len(keeper) == 0  # and the loopback connections it could not take were closed


def test_connections_the_next_match_does_not_seat_are_closed_as_it_starts() -> None:
    """Held from one match's end to the next one's start only: a bot the next match does not seat keeps no
    connection held by a worker that is not playing it."""
    with bot_zoo.zoo_bot(bot_zoo.polite) as a, bot_zoo.zoo_bot(bot_zoo.polite) as b, \
            bot_zoo.zoo_bot(bot_zoo.polite) as c, ConnectionKeeper() as keeper:
        _play([a, b], keeper, 1)
        _play([a, c], keeper, 2)
        _play([a, b], keeper, 3)
        assert (a.connections, b.connections, c.connections) == (1, 2, 1)
        assert keeper.reused == 2 and len(keeper) == 2


def _close_after_end(req: bot_zoo.Request, sock: socket.socket) -> None:
    """Answers well, then closes the connection after /end, without saying so (an idle timeout's close)."""
    bot_zoo.polite(req, sock)
    if req.path == "/end":
        sock.shutdown(socket.SHUT_RDWR)


def test_a_kept_connection_the_bot_closed_meanwhile_is_replaced_without_a_fault() -> None:
    with bot_zoo.zoo_bot(_close_after_end) as a, bot_zoo.zoo_bot(bot_zoo.polite) as b, \
            ConnectionKeeper() as keeper:
        replays = [_play([a, b], keeper, seed) for seed in range(3)]
        assert [r["faults"] for r in replays] == [[]] * 3
        assert (a.connections, b.connections) == (3, 1)


class _HangUpOnReuse:
    """Closes a connection the moment a /start arrives on it after an earlier match (the race of an idle
    timeout with the request that no poll can see); on a new connection, a good bot. ``always``: every
    /start, new connection or not."""

    def __init__(self, always: bool = False) -> None:
        self.always = always
        self.served: list[socket.socket] = []  # held, so that no id is reused
        self.lock = threading.Lock()

    def __call__(self, req: bot_zoo.Request, sock: socket.socket) -> None:
        with self.lock:
            seen = any(s is sock for s in self.served)
            self.served.append(sock)
        if req.path == "/start" and (seen or self.always):
            sock.shutdown(socket.SHUT_RDWR)
            return
        bot_zoo.polite(req, sock)


def test_start_cut_on_a_kept_connection_is_sent_again_on_a_new_one() -> None:
    """Regression for the race a keeper adds: the bot closed the idle connection as /start went out on it. That
    would have been a connection fault at /start, and the seat forfeits: it is sent again on a new connection."""
    with bot_zoo.zoo_bot(_HangUpOnReuse()) as a, bot_zoo.zoo_bot(bot_zoo.polite) as b, \
            ConnectionKeeper() as keeper:
        first = _play([a, b], keeper, 1)
        second = _play([a, b], keeper, 2)
        assert first["faults"] == [] and second["faults"] == []
        assert a.paths().count("/start") == 3 and a.connections == 2
        assert second["result"] == play_match("piranha-pedro", [BotSpec(a.url), BotSpec(b.url)], seed=2,
                                              time_controls=QUICK)["result"]


def test_start_is_sent_again_once_only_and_a_bot_that_hangs_up_on_every_start_forfeits_as_before() -> None:
    with bot_zoo.zoo_bot(_HangUpOnReuse(always=True)) as a, bot_zoo.zoo_bot(bot_zoo.polite) as b, \
            ConnectionKeeper() as keeper:
        keeper.give(_key(a.url), socket.create_connection(("127.0.0.1", a.server_address[1])))
        replay = _play([a, b], keeper, 1)
        assert [(f["seat"], f["path"], f["kind"]) for f in replay["faults"]] == [(0, "/start", "connection_error")]
        assert replay["result"]["forfeited"] == [0]
        assert a.paths() == ["/start", "/start"]  # the kept connection's, then a new one's; not a third


def test_start_sent_again_still_ends_within_the_start_budget() -> None:
    """Review finding: the retry had a budget of its own, after the slowest seat's /start: a seat on a kept
    connection that hung up at once got a second full budget, so the /start phase (the worker's time, its
    lease) took nearly twice ``start_ms``. The retry now gets what is left of the first one's."""
    tc = TimeControls(decision_ms=2000, start_ms=600)

    def slow_start(req: bot_zoo.Request, sock: socket.socket) -> None:
        if req.path == "/start":
            time.sleep(0.4)
        bot_zoo.polite(req, sock)

    first: list[socket.socket] = []

    def hang_up_then_slow(req: bot_zoo.Request, sock: socket.socket) -> None:
        if req.path == "/start":
            if not first or first[0] is sock:  # the kept connection: hung up as /start arrives
                first.append(sock)
                sock.shutdown(socket.SHUT_RDWR)
                return
            time.sleep(0.4)  # on the new one: past what is left of 0.6 s after seat 0's 0.4
        bot_zoo.polite(req, sock)

    with bot_zoo.zoo_bot(slow_start) as a, bot_zoo.zoo_bot(hang_up_then_slow) as b, ConnectionKeeper() as keeper:
        keeper.give(_key(b.url), socket.create_connection(("127.0.0.1", b.server_address[1])))
        started = time.perf_counter()
        replay = _play([a, b], keeper, 1, tc=tc)
        elapsed = time.perf_counter() - started
    assert [(f["seat"], f["path"], f["kind"]) for f in replay["faults"]] == [(1, "/start", "timeout")]
    assert b.paths().count("/start") == 2  # sent again, on a new connection, then cut at the first's deadline
    assert elapsed < 0.75, f"the match took {elapsed:.2f} s with start_ms=600"


def test_no_start_is_sent_again_once_the_first_ones_time_is_up() -> None:
    """The other seat used all of ``start_ms``: nothing is left for a second /start, so none is sent and the
    connection fault stands as it came (not a timeout of a call never made)."""
    tc = TimeControls(decision_ms=2000, start_ms=300)

    def too_slow_start(req: bot_zoo.Request, sock: socket.socket) -> None:
        if req.path == "/start":
            time.sleep(0.5)
        bot_zoo.polite(req, sock)

    with bot_zoo.zoo_bot(too_slow_start) as a, bot_zoo.zoo_bot(_HangUpOnReuse(always=True)) as b, \
            ConnectionKeeper() as keeper:
        keeper.give(_key(b.url), socket.create_connection(("127.0.0.1", b.server_address[1])))
        replay = _play([a, b], keeper, 1, tc=tc)
        assert sorted((f["seat"], f["path"], f["kind"]) for f in replay["faults"]) == [
            (0, "/start", "timeout"), (1, "/start", "connection_error")]
        assert b.paths() == ["/start"]


def test_a_start_answer_cut_mid_body_on_a_kept_connection_is_the_bots_fault_not_sent_again() -> None:
    """Review finding: any connection fault on a kept connection was sent again, so a bot's own broken answer
    (a head, then a body cut short) vanished from the record. Only a fault before any answer's head is."""
    def cut_start(req: bot_zoo.Request, sock: socket.socket) -> None:
        if req.path == "/start":
            sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n{")
            sock.shutdown(socket.SHUT_RDWR)
            return
        bot_zoo.polite(req, sock)

    with bot_zoo.zoo_bot(cut_start) as a, bot_zoo.zoo_bot(bot_zoo.polite) as b, ConnectionKeeper() as keeper:
        keeper.give(_key(a.url), socket.create_connection(("127.0.0.1", a.server_address[1])))
        replay = _play([a, b], keeper, 1)
        assert [(f["seat"], f["path"], f["kind"]) for f in replay["faults"]] == [(0, "/start", "connection_error")]
        assert a.paths() == ["/start"]


def test_a_match_that_fails_to_set_up_closes_the_connections_it_took(monkeypatch) -> None:
    """Review finding: a match took its seats' kept connections before its ``try``; a failure on the way (the
    call pool's thread could not start) left them open until the collector found them."""
    from referee import runner

    with bot_zoo.zoo_bot(bot_zoo.polite) as a, bot_zoo.zoo_bot(bot_zoo.polite) as b, ConnectionKeeper() as keeper:
        _play([a, b], keeper, 1)
        held = [entry[1] for entry in keeper._idle]

        def broken(*_args: object) -> None:
            raise RuntimeError("can't start new thread")

        monkeypatch.setattr(runner, "Asker", broken)
        with pytest.raises(RuntimeError):
            _play([a, b], keeper, 2)
        assert len(held) == 2 and [sock.fileno() for sock in held] == [-1, -1] and len(keeper) == 0


def _key(url: str) -> tuple:
    return url, LOOPBACK, resolve


def test_no_connection_is_kept_from_a_call_that_did_not_end_cleanly() -> None:
    """A bot silent at /end: its call is cut at the deadline and its connection closed, not kept."""
    def silent_at_end(req: bot_zoo.Request, sock: socket.socket) -> None:
        (bot_zoo.silent if req.path == "/end" else bot_zoo.polite)(req, sock)

    with bot_zoo.zoo_bot(silent_at_end) as a, bot_zoo.zoo_bot(bot_zoo.polite) as b, ConnectionKeeper() as keeper:
        replay = _play([a, b], keeper, 1, tc=TimeControls(decision_ms=2000, start_ms=200))
        assert [(f["path"], f["kind"]) for f in replay["faults"]] == [("/end", "timeout")]
        assert len(keeper) == 1 and keeper.take(_key(a.url)) is None
        kept = keeper.take(_key(b.url))
        assert kept is not None
        kept[0].close()


def test_a_match_cut_short_keeps_none_of_its_connections() -> None:
    """A crossed fence (the claim on the match may be over) writes nothing on a kept connection either, and the
    match gives none back."""
    with bot_zoo.zoo_bot(bot_zoo.polite) as a, bot_zoo.zoo_bot(bot_zoo.polite) as b, ConnectionKeeper() as keeper:
        _play([a, b], keeper, 1)
        assert len(keeper) == 2
        fence = Fence(time.perf_counter() + 60)
        fence.abort()
        with pytest.raises(FenceCrossed):
            play_match("piranha-pedro", [BotSpec(a.url), BotSpec(b.url)], seed=2, time_controls=QUICK,
                       guard=LOOPBACK, keeper=keeper, fence=fence)
        fence.close()
        assert len(keeper) == 0  # both taken by the match cut short, and closed with it
        assert a.paths().count("/start") == 1 and b.paths().count("/start") == 1
