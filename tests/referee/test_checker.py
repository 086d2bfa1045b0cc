"""``arena check`` (referee/checker.py): one deliberately broken bot per check, each reported with the
words a bot author needs, and a correct bot that passes everything."""

from __future__ import annotations

import socketserver
import threading
import time

import pytest

from referee.check_report import CheckReport, Status
from referee.checker import check_protocol
from referee.protocol import TimeControls
from referee.url_guard import AddressPolicy
from sample_bots.random_bot import make_bot
from sample_bots.sdk import start_in_thread
from tests import bot_zoo

GAME = "piranha-pedro"


def _check(behaviour: bot_zoo.Behaviour, secret: str = "s", games: list[str] | None = None,
           decision_ms: int = 1000) -> CheckReport:
    with bot_zoo.zoo_bot(behaviour) as zoo:
        return check_protocol(zoo.url, secret, games or [GAME], time_controls=TimeControls(decision_ms=decision_ms),
                              identity_ms=1000)


def _item(report: CheckReport, prefix: str) -> tuple[Status, str]:
    """The status and the whole line (detail and fix) of the first check whose name starts so."""
    for item in report.items:
        if item.name.startswith(prefix):
            return item.status, item.problem()
    raise AssertionError(f"no check named {prefix!r} in:\n{report.text()}")


def _on_posts(behaviour: bot_zoo.Behaviour) -> bot_zoo.Behaviour:
    def handler(req: bot_zoo.Request, sock) -> None:  # type: ignore[no-untyped-def]
        (behaviour if req.method == "POST" else bot_zoo.polite)(req, sock)

    return handler


def _on_path(path: str, behaviour: bot_zoo.Behaviour) -> bot_zoo.Behaviour:
    def handler(req: bot_zoo.Request, sock) -> None:  # type: ignore[no-untyped-def]
        (behaviour if req.path == path else bot_zoo.polite)(req, sock)

    return handler


def _identity(payload: dict) -> bot_zoo.Behaviour:
    def handler(req: bot_zoo.Request, sock) -> None:  # type: ignore[no-untyped-def]
        bot_zoo.ok(sock, payload) if req.method == "GET" else bot_zoo.polite(req, sock)

    return handler


INFO = {"apiversion": "1", "name": "x", "author": "y", "version": "1"}

FAILURES: list[tuple[str, bot_zoo.Behaviour, str, list[str]]] = [
    ("no_answer_to_get", bot_zoo.hang_up, "GET /", ["connection_error", "running and listening"]),
    ("get_not_bot_info", _identity({"hello": "world"}), "GET /", ["bot_info schema", '"apiversion": "1"']),
    ("get_not_json", _on_path("/", bot_zoo.garbage), "GET /", ["bad_json", "answer a JSON body"]),
    ("no_arena_game", _identity({**INFO, "games": ["chess"]}), "games", ["do not include", 'add "piranha-pedro"']),
    ("start_crashes", _on_path("/start", bot_zoo.status(500)), "/start", ["HTTP 500", "crashed", "its log"]),
    ("wrong_secret", _on_posts(bot_zoo.status(401)), "/start", ["HTTP 401", "correctly signed", "HMAC-SHA256"]),
    ("act_not_found", _on_path("/act", bot_zoo.status(404)), "/act", ["HTTP 404", "POST /start, /act and /end"]),
    ("act_redirects", bot_zoo.on_act(bot_zoo.status(302, "Location: http://127.0.0.1:9/\r\n")), "/act",
     ["HTTP 302", "redirects are never followed"]),
    ("act_silent", bot_zoo.on_act(bot_zoo.silent), "/act", ["timeout", "answer within the limit (300 ms"]),
    ("act_too_slow", bot_zoo.on_act(bot_zoo.late(0.5)), "/act", ["timeout", "keep the search under it"]),
    ("act_not_json", bot_zoo.on_act(bot_zoo.garbage), "/act", ["bad_json", "answer a JSON body"]),
    ("act_wrong_shape", bot_zoo.on_act(bot_zoo.wrong_shape), "/act", ["wrong_shape", '{"action": <one of']),
    ("act_illegal", bot_zoo.on_act(bot_zoo.illegal), "/act", ["illegal action", "exactly as it was given"]),
    ("act_wrong_turn", bot_zoo.on_act(bot_zoo.wrong_turn), "/act", ["wrong_turn", 'echo the "turn"']),
    ("act_too_large", bot_zoo.on_act(bot_zoo.huge), "/act", ["too_large", "answer under 65536 bytes"]),
    ("act_hangs_up", bot_zoo.on_act(bot_zoo.close_mid_body), "/act", ["connection_error"]),
    ("stale_turn_refused_as_fresh", bot_zoo.on_act(bot_zoo.status(409)), "/act", ["HTTP 409", "refuse only a turn"]),
]


@pytest.mark.parametrize(("behaviour", "check", "words"), [f[1:] for f in FAILURES], ids=[f[0] for f in FAILURES])
def test_broken_bot_fails_its_check_with_a_fix(behaviour: bot_zoo.Behaviour, check: str, words: list[str]) -> None:
    report = _check(behaviour, decision_ms=300)
    status, line = _item(report, check)
    assert status == Status.FAIL, report.text()
    for word in words:
        assert word in line, line
    assert not report.ok and line in report.problems()


WARNINGS: list[tuple[str, bot_zoo.Behaviour, str, list[str]]] = [
    ("end_crashes", _on_path("/end", bot_zoo.status(500)), "/end", ["HTTP 500", "crashed"]),
    ("accepts_stale_turn", bot_zoo.polite, "stale turn", ["replayed /act", "answer HTTP 409"]),
    ("accepts_unsigned", bot_zoo.polite, "unsigned request", ["without X-Arena-Signature", "answer HTTP 401"]),
    ("no_keep_alive", bot_zoo.close_each, "keep-alive", ["closes the connection", "keep connections open"]),
    ("nagle_split_writes", bot_zoo.split_writes, "nagle", ["separate writes with Nagle on", "TCP_NODELAY",
                                                           "delayed ACK (40 ms)"]),
    ("answers_near_the_size_cap", bot_zoo.on_act(lambda req, sock: bot_zoo.ok(
        sock, {"action": bot_zoo.first_legal(req), "notes": "x" * 40_000})), "body size",
     ["cap 65536", 'answer only {"action": ...}']),
    ("slow_near_limit", bot_zoo.on_act(bot_zoo.late(0.35)), "timing", ["of the 600 ms limit", "keep a margin"]),
]


@pytest.mark.parametrize(("behaviour", "check", "words"), [w[1:] for w in WARNINGS], ids=[w[0] for w in WARNINGS])
def test_costly_bot_gets_a_warning_and_still_passes(behaviour: bot_zoo.Behaviour, check: str,
                                                    words: list[str]) -> None:
    """Warnings cost the bot time or safety but no fault: the check still passes (exit 0)."""
    report = _check(behaviour, decision_ms=600)
    status, line = _item(report, check)
    assert status == Status.WARN, report.text()
    for word in words:
        assert word in line, line
    assert report.ok, report.text()


def test_a_correct_signing_bot_passes_every_check_of_every_game() -> None:
    bot = make_bot(1)
    bot.secret = "sekrit"
    server = start_in_thread(bot)
    try:
        report = check_protocol(server.url, "sekrit")
    finally:
        server.shutdown()
        server.server_close()
    assert report.ok and all(item.status == Status.PASS for item in report.items), report.text()
    names = [item.name for item in report.items]
    assert "/act piranha-pedro-ko move_piranha" in names and "/act piranha-pedro choose_card" in names
    assert any(name.startswith("/act pajarracos") for name in names)
    assert report.elapsed_s < 5


class _SerialZoo(bot_zoo.ZooServer):
    """One connection at a time, kept alive: the next seat waits until the first hangs up."""

    process_request = socketserver.TCPServer.process_request


def test_a_bot_that_serves_one_connection_at_a_time_is_told_to_serve_concurrently() -> None:
    server = _SerialZoo(bot_zoo.polite)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        began = time.perf_counter()
        report = check_protocol(server.url, "s", time_controls=TimeControls(start_ms=800), identity_ms=1000)
        elapsed = time.perf_counter() - began
    finally:
        server.shutdown()
        server.server_close()
    status, line = _item(report, "/start")
    assert status == Status.FAIL and "timeout" in line and "serve connections concurrently" in line, line
    assert elapsed < 3 and not report.ok


def test_a_bot_that_refuses_big_requests_is_told_the_size() -> None:
    """Views and legal actions make requests of several KiB: a bot capped at 1 KiB answers 413."""

    def small(req: bot_zoo.Request, sock) -> None:  # type: ignore[no-untyped-def]
        if len(req.body) > 1024:
            sock.sendall(bot_zoo.http_response(413, b'{"error": "too large"}'))
        else:
            bot_zoo.polite(req, sock)

    status, line = _item(_check(small), "/act")
    assert status == Status.FAIL and "HTTP 413" in line and "accept request bodies" in line


def test_without_a_secret_signatures_are_skipped_not_failed() -> None:
    report = _check(bot_zoo.polite, secret="")
    assert _item(report, "unsigned request")[0] == Status.SKIP and report.ok


def test_a_silent_bot_is_checked_in_a_few_deadlines() -> None:
    """Bounded: after a few faults the check stops calling, whatever the bot does."""
    began = time.perf_counter()
    with bot_zoo.zoo_bot(bot_zoo.on_act(bot_zoo.silent)) as zoo:
        report = check_protocol(zoo.url, "s", time_controls=TimeControls(decision_ms=300), identity_ms=1000)
    assert not report.ok and time.perf_counter() - began < 4
    assert any(item.status == Status.SKIP for item in report.items)


def test_a_bot_that_thinks_for_its_whole_deadline_is_checked_in_bounded_time() -> None:
    with bot_zoo.zoo_bot(bot_zoo.on_act(bot_zoo.late(0.25))) as zoo:
        began = time.perf_counter()
        report = check_protocol(zoo.url, "s", max_seconds=1.0)
        elapsed = time.perf_counter() - began
    assert elapsed < 3 and report.ok, report.text()
    assert any(item.status == Status.SKIP for item in report.items)


def test_the_url_guard_applies() -> None:
    with bot_zoo.zoo_bot(bot_zoo.polite) as zoo:
        report = check_protocol(zoo.url, "s", [GAME], guard=AddressPolicy(allow_loopback=False))
        assert zoo.requests == []
    status, line = _item(report, "GET /")
    assert status == Status.FAIL and "unsafe_url" in line and "loopback" in line


def test_a_problem_line_never_quotes_the_bot() -> None:
    """The 422 of POST /api/bots shows these lines: nothing the bot sent may appear in them."""
    leak = "LEAKED-1234"

    def telling(req: bot_zoo.Request, sock) -> None:  # type: ignore[no-untyped-def]
        if req.method == "GET":
            bot_zoo.ok(sock, {**INFO, "games": ["*"], "name": leak})
        else:
            sock.sendall(bot_zoo.http_response(500 if req.path == "/start" else 200, leak.encode()))

    report = _check(telling)
    assert report.problems() and leak not in report.text()




def test_regression_a_lone_surrogate_in_a_bots_author_made_its_page_a_500() -> None:
    """``"author": "\\ud800"`` is valid JSON but no valid UTF-8: stored as sent, it made the bot's page a
    500 (and a NUL is refused by PostgreSQL). What the bot says of itself is kept printable."""
    def odd_identity(req: bot_zoo.Request, sock) -> None:  # type: ignore[no-untyped-def]
        if req.method != "GET":
            return bot_zoo.polite(req, sock)
        body = (b'{"apiversion": "1", "name": "odd\\u0000", "author": "a\\ud800b", "version": "1\\n2", '
                b'"games": ["*"]}')
        sock.sendall(bot_zoo.http_response(200, body))

    report = _check(odd_identity)
    assert report.info["author"] == "a\ufffdb" and report.info["name"] == "odd\ufffd", report.info
    assert report.info["version"] == "1\ufffd2"
    for text in (report.info["author"], report.info["name"], report.info["version"]):
        text.encode("utf-8")  # storable and showable


def test_a_check_done_in_hundredths_of_a_second_says_milliseconds_not_zero_seconds() -> None:
    """A fast bot's report said "33 passed ... in 0.0 s", which reads as if nothing had been checked."""
    quick, slow = CheckReport(elapsed_s=0.043), CheckReport(elapsed_s=2.25)
    assert quick.text().endswith("0 skipped in 43 ms: the bot is ready to play")
    assert slow.text().endswith("0 skipped in 2.2 s: the bot is ready to play")
