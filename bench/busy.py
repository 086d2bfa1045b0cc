"""Busy loops beside a benchmark: issue 19 judges its goals on a loaded machine as well as on a quiet one."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator


@contextlib.contextmanager
def busy_loops(count: int) -> Iterator[None]:
    """``count`` processes, each spinning on a core while the block runs; killed when it ends, failed or not."""
    procs: list[subprocess.Popen] = []
    try:
        for _ in range(count):
            procs.append(subprocess.Popen([sys.executable, "-c", "while True: pass"]))
        if procs:
            print(f"{count} busy-loop process(es) running beside the benchmark", flush=True)
        yield
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
