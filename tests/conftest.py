"""Shared fixtures: real sample bots served on loopback; figures a test reports at the end of the run."""

from __future__ import annotations

import gc
import os
import tempfile
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
def spy(monkeypatch) -> Iterator[ConnectionSpy]:
    """Every connection the referee's transport attempts, recorded; none may leave loopback (refused at once, and
    the test fails as it ends even where the code under test swallowed the refusal)."""
    recorder = ConnectionSpy()
    monkeypatch.setattr(bot_transport.socket, "create_connection", recorder)
    spied = recorder.connect_ex
    monkeypatch.setattr(bot_transport.socket.socket, "connect_ex", lambda sock, address: spied(sock, address))
    yield recorder
    assert recorder.outside == [], f"connections attempted off loopback: {recorder.outside}"


FIGURES_ENV = "ARENA_TEST_FIGURES"  # a file the run's processes append figures to (pytest-xdist workers too)


def report_figure(line: str) -> None:
    """A figure a test measured, printed in the run's summary (captured output would hide it on a pass).
    Kept in a file named by the controlling process, since under pytest-xdist the test runs elsewhere."""
    with open(os.environ[FIGURES_ENV], "a", encoding="utf-8") as figures:
        figures.write(line.replace("\n", " ") + "\n")


def pytest_configure(config) -> None:  # type: ignore[no-untyped-def]
    if not hasattr(config, "workerinput"):  # the controlling process: its workers inherit the variable
        handle, path = tempfile.mkstemp(prefix="arena-figures-", suffix=".txt")
        os.close(handle)
        os.environ[FIGURES_ENV] = path


def pytest_terminal_summary(terminalreporter) -> None:  # type: ignore[no-untyped-def]
    path = os.environ.get(FIGURES_ENV)
    if not path or not os.path.exists(path) or hasattr(terminalreporter.config, "workerinput"):
        return
    with open(path, encoding="utf-8") as figures:
        lines = figures.read().splitlines()
    os.unlink(path)
    if lines:
        terminalreporter.section("figures reported by tests")
        for line in lines:
            terminalreporter.write_line(line)


# Tests that judge deadlines, latencies or cut links in milliseconds to seconds: beside two other pytest-xdist
# workers on two cores they failed by tens of milliseconds (hostile bots' deadlines, search budgets, a
# replayed match's timeout, the cluster's cut that three requests never noticed). scripts/test.sh runs them
# after the parallel run, alone. So too the benchmarks' busy loops (tests/bench/), which would take both cores
# from the tests beside them.
SERIAL = ("tests/reliability/", "tests/cluster/", "tests/referee/", "tests/deploy/", "tests/sample_bots/test_search",
          "tests/arena/test_matches_service.py", "tests/arena/test_health_check_outside_transactions.py",
          "tests/arena/test_stale_lease.py", "tests/arena/test_ladder_integration.py", "tests/bench/")


def pytest_collection_modifyitems(config, items) -> None:  # type: ignore[no-untyped-def]
    for item in items:
        if item.nodeid.startswith(SERIAL):
            item.add_marker(pytest.mark.serial)


# The test process hosts bots and the referee in its own threads, so a full garbage collection stops both:
# in the serial run, with every module of the suite loaded, collections took 100-550 ms (measured with a
# gc.callbacks hook), and a random bot with a 150 ms limit timed out in test_runner_faults in two CI runs.
# As the worker does after its matches (arena.runtime.heap), what is alive between tests is frozen, so
# collections during a test scan only what that test made.
def pytest_collection_finish(session) -> None:  # type: ignore[no-untyped-def]
    gc.collect()
    gc.freeze()


def pytest_runtest_teardown(item, nextitem) -> None:  # type: ignore[no-untyped-def]
    if nextitem is None or getattr(nextitem, "module", None) is not getattr(item, "module", None):
        gc.collect()
        gc.freeze()
