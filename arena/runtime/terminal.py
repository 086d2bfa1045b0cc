"""One terminal for progress bars and everything else printed meanwhile: tqdm draws the bars, and every
other line (the workers' log lines, the supervisor's notes) goes through ``say``, which clears the bars,
prints the line whole and draws them again. Printing beside a bar ran the two into each other
("0/122026-12-01 13:20:50,492 INFO ...").

Where the stream is not a terminal (a log file, CI, ``| tee``), a bar is lines instead: its carriage returns
made one line of every redraw ("0/12 matches [00:00]0/12 matches [00:00]..." in a user's log)."""

from __future__ import annotations

import sys
import time
from typing import IO

from tqdm import tqdm


def say(line: str, stream: IO[str] | None = None) -> None:
    """Print ``line`` above any bar on ``stream`` (standard error by default, where the bars are)."""
    tqdm.write(line.rstrip("\n"), file=stream or sys.stderr)


LINE_EVERY_S = 10.0  # without a terminal: a progress line at most this often, and one at the end


class ProgressLines:
    """A bar's counterpart for a stream that is no terminal: whole lines ("piranha-pedro: 5/12 matches
    [00:02]"), at the start, at most every ``LINE_EVERY_S`` and at the end; ``update``/``n``/``close`` as
    tqdm's, which its callers use."""

    def __init__(self, total: int, label: str, stream: IO[str]) -> None:
        self.total, self.label, self.stream = total, label, stream
        self.n, self.started = 0, time.monotonic()
        self.written_at, self.written_n = self.started, -1
        self._write()

    def update(self, count: int = 1) -> None:
        self.n += count
        if time.monotonic() - self.written_at >= LINE_EVERY_S:
            self._write()

    def close(self) -> None:
        if self.written_n != self.n:
            self._write()

    def _write(self) -> None:
        now = time.monotonic()
        elapsed = int(now - self.started)
        self.stream.write(f"{self.label}: {self.n}/{self.total} matches [{elapsed // 60:02d}:{elapsed % 60:02d}]\n")
        self.stream.flush()
        self.written_at, self.written_n = now, self.n

    def __enter__(self) -> ProgressLines:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def bar(total: int, label: str, stream: IO[str] | None = None) -> tqdm | ProgressLines:
    """A bar of matches played, on standard error unless told otherwise; lines where it is no terminal."""
    out = stream or sys.stderr
    if not _is_terminal(out):
        return ProgressLines(total, label, out)
    return tqdm(total=total, desc=f"{label:14}", unit="match", file=out, dynamic_ncols=True,
                leave=True, bar_format="{desc} {bar} {n_fmt}/{total_fmt} matches [{elapsed}]")


def _is_terminal(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # closed, or not a file at all
        return False
