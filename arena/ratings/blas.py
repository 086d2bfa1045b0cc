"""Run numpy's linear algebra on one thread while a leaderboard is computed.

Why: numpy's bundled OpenBLAS starts one thread per core, and its threads spin while they wait for each
other. On the arena's 2-core machines the other core is usually busy (a web process, a match worker), and
then a threaded factorisation is many times slower than a single-threaded one (docs/benchmarks.md,
"Leaderboard refresh at scale"). A refit is one job among several on the machine, so one thread is the
right share.

threadpoolctl finds and sets the BLAS that numpy loaded; the setting is process-wide, so nested and
concurrent blocks share one limit, and the outermost one restores the previous count.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

from threadpoolctl import ThreadpoolController

_lock = threading.Lock()
_depth = 0
_limiter: Any = None


@cache
def controller() -> ThreadpoolController:
    """The thread pools of this process, looked up once numpy (and so its BLAS) is loaded."""
    import numpy  # noqa: F401 - loads the BLAS the controller must find

    return ThreadpoolController()


@contextmanager
def single_thread() -> Iterator[None]:
    """numpy's BLAS on one thread inside the block."""
    global _depth, _limiter
    with _lock:
        if _depth == 0:
            _limiter = controller().limit(limits=1, user_api="blas")
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                _limiter.restore_original_limits()
                _limiter = None
