"""bench.busy: the busy loops a benchmark runs beside it are running while it runs, and gone after, failed or not."""

from __future__ import annotations

import os
import time

import pytest

from bench import busy
from bench.throughput import cpu_seconds


def _spinners() -> set[int]:
    """This process's children running ``while True: pass`` (the loops, by their command line)."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    parent = int(stat.read().rsplit(")", 1)[1].split()[1])
                with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                    command = cmdline.read()
            except (OSError, ValueError, IndexError):
                continue
            if parent == os.getpid() and b"while True: pass" in command:
                found.add(int(entry))
    return found


def _state(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def test_the_loops_spin_while_the_block_runs_and_are_gone_after(capsys) -> None:
    """Each loop burns CPU all along (not only while its interpreter starts: a loop that slept would not do),
    and none is left running or unreaped after the block."""
    with busy.busy_loops(2):
        running = _spinners()
        assert len(running) == 2
        first = {pid: cpu_seconds(pid) for pid in running}
        spin = 0.5  # half a second of CPU each, beyond what they had used at first
        deadline = time.monotonic() + 20
        while any(cpu_seconds(pid) - first[pid] < spin for pid in running) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert all(cpu_seconds(pid) - first[pid] >= spin for pid in running), first
    assert _spinners() == set() and all(_state(pid) is None for pid in running)  # killed and reaped
    assert "2 busy-loop process(es) running beside the benchmark" in capsys.readouterr().out


def test_the_loops_are_gone_when_the_block_fails() -> None:
    with pytest.raises(RuntimeError), busy.busy_loops(1):
        running = _spinners()
        raise RuntimeError("the benchmark failed")
    assert len(running) == 1 and _spinners() == set() and all(_state(pid) is None for pid in running)


def test_no_loops_no_line(capsys) -> None:
    with busy.busy_loops(0):
        assert _spinners() == set()
    assert capsys.readouterr().out == ""
