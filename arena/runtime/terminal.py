"""One terminal for progress bars and everything else printed meanwhile: tqdm draws the bars, and every
other line (the workers' log lines, the supervisor's notes) goes through ``say``, which clears the bars,
prints the line whole and draws them again. Printing beside a bar ran the two into each other
("0/122026-12-01 13:20:50,492 INFO ...")."""

from __future__ import annotations

import sys
from typing import IO

from tqdm import tqdm


def say(line: str, stream: IO[str] | None = None) -> None:
    """Print ``line`` above any bar on ``stream`` (standard error by default, where the bars are)."""
    tqdm.write(line.rstrip("\n"), file=stream or sys.stderr)


def bar(total: int, label: str, stream: IO[str] | None = None) -> tqdm:
    """A bar of matches played, on standard error unless told otherwise."""
    return tqdm(total=total, desc=f"{label:14}", unit="match", file=stream or sys.stderr, dynamic_ncols=True,
                leave=True, bar_format="{desc} {bar} {n_fmt}/{total_fmt} matches [{elapsed}]")
