"""Worker supervision of ``arena up`` (issue 15): a killed worker is replaced, one that keeps dying at once
is restarted with back-off and the terminal is told, and nothing is restarted once stopping began."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from arena.runtime.supervisor import Supervisor, describe_exit, restart_delay
from tests.arena.arena_process import ArenaProcess


def test_restart_delay_backs_off_only_while_a_worker_keeps_dying_at_once() -> None:
    assert [restart_delay(n) for n in range(8)] == [0, 0, 1, 2, 4, 8, 16, 30]
    assert restart_delay(100) == 30


def test_describe_exit() -> None:
    assert describe_exit(-9) == "killed by SIGKILL"
    assert describe_exit(3) == "exit code 3"


def _counting(tmp_path: Path, script: str) -> list[str]:
    """A stand-in worker that notes each start in a file, then runs ``script``."""
    marker = tmp_path / "starts"
    return [sys.executable, "-c", f"open({str(marker)!r}, 'a').write('x'); {script}"]


def _starts(tmp_path: Path) -> int:
    marker = tmp_path / "starts"
    return len(marker.read_text()) if marker.exists() else 0


def test_a_worker_that_keeps_dying_at_once_is_restarted_with_back_off(tmp_path) -> None:
    said: list[str] = []
    supervisor = Supervisor(dict(os.environ), 1, say=said.append,
                            command=_counting(tmp_path, "import sys; sys.exit(3)"))
    supervisor.start()
    time.sleep(4.5)
    supervisor.stop(grace_s=1)
    assert 3 <= _starts(tmp_path) <= 5  # restarted at once, then after 1 s, 2 s, 4 s: not 18 times
    assert "exit code 3; starting a new one" in said[0]
    assert any("2 time(s) in a row; starting it again in 1 s" in line for line in said), said
    assert any("3 time(s) in a row; starting it again in 2 s" in line for line in said), said


def test_a_worker_that_cannot_be_started_is_tried_again_with_back_off(tmp_path) -> None:
    said: list[str] = []
    supervisor = Supervisor(dict(os.environ), 1, say=said.append, command=[sys.executable, "-c", "pass"])
    supervisor.start()
    supervisor.command = [str(tmp_path / "missing")]  # from now on every start fails
    time.sleep(2.5)
    supervisor.stop(grace_s=1)
    failures = [line for line in said if "could not be started" in line]
    assert 1 <= len(failures) <= 3 and "trying again in" in failures[0], said


def test_no_worker_is_restarted_once_stopping_began(tmp_path) -> None:
    said: list[str] = []
    supervisor = Supervisor(dict(os.environ), 3, say=said.append,
                            command=_counting(tmp_path, "import time; time.sleep(0.3)"))
    supervisor.start()
    # until they are being restarted: a fixed 1.2 s saw only the first three starts once, on a loaded machine
    deadline = time.monotonic() + 10
    while _starts(tmp_path) <= 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    supervisor.stop(grace_s=1)
    starts = _starts(tmp_path)
    assert starts > 3 and said  # they were being restarted
    time.sleep(1.5)
    assert _starts(tmp_path) == starts
    assert supervisor.pids() == []


@pytest.mark.integration
def test_arena_up_did_not_restart_a_killed_worker(tmp_path) -> None:
    """Regression: SIGKILL one worker of a running ``arena up`` and it was never replaced. Now a new
    worker appears at once, the killed one's RQ scheduler process goes with it, and every match is
    still played (the killed worker's match is replayed once its lease runs out)."""
    run = ArenaProcess(tmp_path, "demo", "--cycles", "2", "--exit",
                       env={"ARENA_MATCH_LEASE_S": "3", "ARENA_RECONCILE_INTERVAL_S": "1"})
    try:
        run.wait_for_output("match started")
        run.wait_until_serving()
        victim = max(run.workers(), key=lambda p: len(p.children()))  # the one with a scheduler, if any
        left_behind = victim.children()
        old_pids = {p.pid for p in run.workers()}
        victim.send_signal(signal.SIGKILL)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            fresh = {p.pid for p in run.workers()} - old_pids
            if fresh:
                break
            time.sleep(0.1)
        assert fresh, run.output()[-3000:]
        assert f"(pid {victim.pid}) killed by SIGKILL; starting a new one" in run.output()
        psutil.wait_procs(left_behind, timeout=3)
        assert not any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE for p in left_behind)
        try:
            code = run.proc.wait(timeout=240)
        except subprocess.TimeoutExpired:  # say where it stood, not only that it hung
            pytest.fail(f"the demo did not finish in 240 s after the kill:\n{run.output()[-6000:]}")
        assert code == 0, run.output()[-4000:]
        assert "pajarracos, 3 players" in run.output()  # the demo's tournaments finished: every match played
        assert run.leftovers() == []
    finally:
        run.stop()
