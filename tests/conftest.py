"""Shared fixtures: real sample bots served on loopback; figures a test reports at the end of the run."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from referee import bot_transport
from sample_bots.random_bot import make_bot
from sample_bots.sdk import BotServer, start_in_thread
from tests.connection_spy import ConnectionSpy


@pytest.fixture(scope="session")
def random_bots() -> Iterator[list[BotServer]]:
    """Six random bots, one per seat of the biggest table."""
    servers = [start_in_thread(make_bot(seed)) for seed in range(6)]
    yield servers
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture
def spy(monkeypatch) -> ConnectionSpy:
    """Every connection the referee's transport attempts, recorded; none may leave loopback."""
    recorder = ConnectionSpy()
    monkeypatch.setattr(bot_transport.socket, "create_connection", recorder)
    return recorder


FIGURES: list[str] = []


def report_figure(line: str) -> None:
    """A figure a test measured, printed in the run's summary (captured output would hide it on a pass)."""
    FIGURES.append(line)


def pytest_terminal_summary(terminalreporter) -> None:  # type: ignore[no-untyped-def]
    if FIGURES:
        terminalreporter.section("figures reported by tests")
        for line in FIGURES:
            terminalreporter.write_line(line)
