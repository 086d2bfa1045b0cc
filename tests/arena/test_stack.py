"""``arena up`` and ``arena demo`` stop cleanly (issue 23): Ctrl-C, SIGTERM, a second Ctrl-C, and SIGKILL
followed by a new start, each timed, and afterwards no process they started is left anywhere in the
process table (the embedded redis-server and the workers' RQ scheduler processes included)."""

from __future__ import annotations

import signal
import socket
from collections.abc import Iterator

import pytest
import requests

from tests.arena.arena_process import ArenaProcess

pytestmark = pytest.mark.integration
STOP_WITHIN_S = 6.0  # a 3 s grace for matches in flight, plus the rest, on a busy 2-core machine


@pytest.fixture
def runs() -> Iterator[list[ArenaProcess]]:
    started: list[ArenaProcess] = []
    yield started
    for run in started:
        run.stop()


def _up(tmp_path, runs: list[ArenaProcess], *args: str, **kwargs) -> ArenaProcess:
    run = ArenaProcess(tmp_path, "up", *args, **kwargs)
    runs.append(run)
    run.wait_until_serving()
    assert run.redis_server() is not None  # the embedded default, as a child
    return run


def _stopped_cleanly(run: ArenaProcess, sent: float) -> float:
    took = run.wait_exit(sent)
    assert run.leftovers() == []
    out = run.output()
    assert "\nstopping... (" in out  # on a line of its own, not after a log line or a progress bar
    assert "arena: stopped in" in out
    assert "subscription lost" not in out  # regression: the live hub outlived Redis and said so while stopping
    return took


def test_ctrl_c_left_arena_up_running(tmp_path, runs) -> None:
    """Regression: after Ctrl-C the workers and the web server went, but ``arena up`` itself was still
    running 40 s later."""
    run = _up(tmp_path, runs)
    took = _stopped_cleanly(run, run.signal_group(signal.SIGINT))
    assert took < STOP_WITHIN_S and run.proc.returncode == 0


def test_sigterm_left_the_embedded_redis_running(tmp_path, runs) -> None:
    """Regression: SIGTERM ended ``arena up`` in 0.5 s but left its redis-server (and its workers)
    re-parented to init; one more piled up with every start and stop."""
    first = _up(tmp_path, runs)
    data_dir = first.data_dir
    took = _stopped_cleanly(first, first.signal(signal.SIGTERM))
    assert took < STOP_WITHIN_S and first.proc.returncode == 0
    again = _up(tmp_path, runs, data_dir=data_dir)  # and again, on the same data folder: still nothing piles up
    assert "left running" not in again.output()
    _stopped_cleanly(again, again.signal(signal.SIGTERM))


def test_sighup_when_the_terminal_closes_stops_it_the_same_way(tmp_path, runs) -> None:
    run = _up(tmp_path, runs)
    took = _stopped_cleanly(run, run.signal(signal.SIGHUP))
    assert took < STOP_WITHIN_S and run.proc.returncode == 0


def test_sigkill_of_arena_up_leaves_nothing_and_the_next_start_works(tmp_path, runs) -> None:
    first = _up(tmp_path, runs)
    first.descendants()
    first.wait_exit(first.signal(signal.SIGKILL))
    # the lifeline and the parent-death signal take its children along. A worker still starting its interpreter
    # when arena up died (it is serving before its workers are up) goes when its first line runs: with five busy
    # loops beside it, two workers were still there 1.3 s after the kill, one thread each, the lifeline not yet
    # read, and gone 5 s later; a loaded CI run on a slow machine saw them past the 5 s this waited before
    assert first.leftovers(timeout_s=30) == []
    again = _up(tmp_path, runs, data_dir=first.data_dir)
    _stopped_cleanly(again, again.signal_group(signal.SIGINT))


def test_a_second_ctrl_c_stops_at_once(tmp_path, runs) -> None:
    run = _up(tmp_path, runs)
    run.signal_group(signal.SIGINT)
    run.wait_for_output("stopping...")
    took = run.wait_exit(run.signal_group(signal.SIGINT))
    assert took < 1.5 and run.proc.returncode in (0, 130)  # 0 when the first had already finished
    assert run.leftovers() == []


def test_arena_demo_stops_cleanly_mid_tournament_on_ctrl_c(tmp_path, runs) -> None:
    run = ArenaProcess(tmp_path, "demo", "--cycles", "3")
    runs.append(run)
    run.wait_for_output("match started")  # matches in flight, sample bots serving
    run.descendants()
    took = _stopped_cleanly(run, run.signal_group(signal.SIGINT))
    assert took < STOP_WITHIN_S and run.proc.returncode == 0


def test_arena_demo_after_sigterm_and_after_sigkill(tmp_path, runs) -> None:
    """SIGTERM mid-tournament, then SIGKILL mid-tournament, then a demo to its end on the same data."""
    first = ArenaProcess(tmp_path, "demo", "--cycles", "3")
    runs.append(first)
    first.wait_for_output("match started")
    took = _stopped_cleanly(first, first.signal(signal.SIGTERM))
    assert took < STOP_WITHIN_S
    second = ArenaProcess(tmp_path, "demo", "--cycles", "3", data_dir=first.data_dir)
    runs.append(second)
    second.wait_for_output("tournaments:")
    second.wait_until_serving()
    second.wait_exit(second.signal(signal.SIGKILL))
    assert second.leftovers() == []
    third = ArenaProcess(tmp_path, "demo", "--exit", data_dir=first.data_dir)
    runs.append(third)
    third.wait_until_serving()
    third.descendants()
    third.proc.wait(timeout=240)
    assert third.proc.returncode == 0, third.output()[-4000:]
    assert "pajarracos, 3 players" in third.output()
    assert third.leftovers() == []


def test_arena_up_on_a_port_in_use_says_so_and_leaves_nothing(tmp_path, runs) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        run = ArenaProcess(tmp_path, "up", "--port", str(taken.getsockname()[1]))  # the last --port counts
        runs.append(run)
        assert run.proc.wait(timeout=60) == 1
    assert "is in use by another program" in run.output() and "stopped in" not in run.output()
    assert run.leftovers() == []


def test_a_second_arena_on_the_same_data_folder_is_refused_and_the_first_keeps_running(tmp_path, runs) -> None:
    import requests

    first = _up(tmp_path, runs)
    second = ArenaProcess(tmp_path, "up", data_dir=first.data_dir)
    runs.append(second)
    assert second.proc.wait(timeout=60) == 1
    assert f"another arena (pid {first.proc.pid}) is running on {first.data_dir}" in second.output()
    assert requests.get(first.url + "/healthz", timeout=5).status_code == 200
    assert first.redis_server() is not None
    _stopped_cleanly(first, first.signal_group(signal.SIGINT))


def test_regression_a_spectators_live_subscription_said_lost_while_the_arena_stopped(tmp_path, runs) -> None:
    """With a page following the ladder (an open ``/live`` stream), Ctrl-C stopped Redis before the live hub
    and the terminal said "live subscription lost (Error 2 connecting to ...redis.sock)" under "stopping..."."""
    run = _up(tmp_path, runs)
    with requests.get(f"{run.url}/live/ladder-1", stream=True, timeout=5) as spectator:
        assert spectator.status_code == 200 and next(spectator.iter_content(None)).startswith(b"retry:")
        took = _stopped_cleanly(run, run.signal_group(signal.SIGINT))
    assert took < STOP_WITHIN_S
