"""A health check says what went wrong in words a bot author acts on, never an exception's repr."""

from __future__ import annotations

import socket

import pytest

from referee.check_report import connection_words
from referee.health import check_bot
from sample_bots.random_bot import make_bot
from sample_bots.sdk import start_in_thread
from tests import bot_zoo


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # nothing listens once it is closed


def test_a_refused_connection_is_said_in_words() -> None:
    report = check_bot(f"http://127.0.0.1:{_closed_port()}", "secret", "piranha-pedro")
    (problem,) = report.problems
    assert "connection refused at the bot's address" in problem
    assert "Errno" not in problem and "Error:" not in problem


def test_a_bot_that_checks_another_secret_is_told_how_to_start() -> None:
    bot = make_bot(1)
    bot.secret = "an-older-secret"
    server = start_in_thread(bot)
    try:
        (problem, *_rest) = check_bot(server.url, "the-new-secret", "piranha-pedro").problems
    finally:
        server.shutdown()
        server.server_close()
    assert "answered 401" in problem and "start it without a secret first" in problem


def test_a_bot_that_plays_another_game_and_one_that_answers_garbage() -> None:
    server = start_in_thread(make_bot(1))
    try:
        assert check_bot(server.url, "s", "piranha-pedro").ok
    finally:
        server.shutdown()
        server.server_close()
    with bot_zoo.zoo_bot(bot_zoo.garbage) as zoo:
        (problem, *_rest) = check_bot(zoo.url, "s", "piranha-pedro").problems
    assert "the answer is not JSON" in problem


@pytest.mark.parametrize(("message", "words"), [
    ("ConnectionRefusedError: [Errno 111] Connection refused (talking to x)", "connection refused"),
    ("ResolveFailed: cannot resolve 'nowhere.invalid'", "does not resolve"),
    ("RemoteDisconnected: Remote end closed connection without response", "closed the connection without"),
    ("IncompleteRead: IncompleteRead(3 bytes read, 7 more expected)", "in the middle of its answer"),
    ("SSLError: wrong version number", "TLS handshake failed"),
    ("OSError: something new", "could not hold a connection"),
])
def test_connection_faults_by_what_happened(message: str, words: str) -> None:
    assert words in connection_words(message)
