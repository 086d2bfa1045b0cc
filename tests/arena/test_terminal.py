"""Progress bars and worker lines share the terminal (arena.runtime.terminal, Supervisor output)."""

from __future__ import annotations

import io
import sys
import threading

from arena.runtime import terminal
from arena.runtime.supervisor import Supervisor


class Terminal(io.StringIO):
    """What a terminal answers to ``isatty``."""

    def isatty(self) -> bool:
        return True


def test_log_lines_regression_ran_into_the_progress_bar() -> None:
    """Bug: the demo drew its bar with a bare "\\r" and the workers printed beside it, so a log line
    started right after "0/12" on the bar's line. A line said while a bar is drawn now stands alone."""
    stream = Terminal()
    with terminal.bar(12, "pajarracos", stream) as progress:
        progress.update(3)
        terminal.say("2026-12-01 13:20:50,492 INFO arena.matches match played", stream)
        progress.update(1)
    text = stream.getvalue()
    line_start = text.index("2026-12-01 13:20:50")
    before = text[:line_start].rstrip(" ")
    assert before.endswith("\r") or before.endswith("\n")  # the bar was cleared first
    assert text[line_start:].split("\n", 1)[0].endswith("match played")  # and the line ended whole
    assert "4/12 matches" in text


def test_regression_without_a_terminal_the_bar_was_one_line_of_every_redraw(monkeypatch) -> None:
    """A user's log of ``arena demo`` (``ARENA_LADDER=0``) to a file: "piranha-pedro 0/12 matches [00:00]"
    eleven times on one line, joined by carriage returns. Without a terminal the bar is whole lines: one at
    the start, at most one every ``LINE_EVERY_S``, one at the end; a line said meanwhile stands alone."""
    clock = [100.0]
    monkeypatch.setattr(terminal.time, "monotonic", lambda: clock[0])
    stream = io.StringIO()
    with terminal.bar(12, "piranha-pedro", stream) as progress:
        for _ in range(5):
            progress.update(1)
            clock[0] += 1.0
        terminal.say("a worker's line", stream)
        clock[0] += terminal.LINE_EVERY_S
        progress.update(4)
        progress.update(3)
    assert "\r" not in stream.getvalue()
    assert stream.getvalue().splitlines() == ["piranha-pedro: 0/12 matches [00:00]", "a worker's line",
                                              "piranha-pedro: 9/12 matches [00:15]",
                                              "piranha-pedro: 12/12 matches [00:15]"]


def test_the_supervisor_hands_over_each_line_of_its_workers_whole() -> None:
    lines: list[str] = []
    got = threading.Event()

    def output(line: str) -> None:
        lines.append(line)
        if len(lines) == 2:
            got.set()

    code = "import sys; print('to stdout', flush=True); print('to stderr', file=sys.stderr, flush=True)"
    supervisor = Supervisor({}, 1, say=lambda line: None, command=[sys.executable, "-c", code], output=output)
    supervisor.start()
    try:
        assert got.wait(10)
    finally:
        supervisor.stop(1)
    assert sorted(line.strip() for line in lines) == ["to stderr", "to stdout"]
