"""Run numpy's linear algebra on one thread while a leaderboard is computed.

Why: numpy's bundled OpenBLAS starts one thread per core, and its threads spin while they wait for each other.
On the arena's 2-core machines the other core is usually busy (a web process, a match worker), and then a
threaded factorisation is many times slower than a single-threaded one. Measured with one other process
busy: Cholesky of a 1000 x 1000 matrix 33 ms on one thread, 1.0 s on two; 100 batched 150 x 150 solves
32 ms against 311 ms. A refit is one job among several on the machine, so one thread is the right share.

The thread count is set through OpenBLAS's own entry point, found among the libraries the process has
loaded (what threadpoolctl does, without the dependency); anything else (another BLAS, another OS) makes
``single_thread`` a no-op. OpenBLAS's setting is process-wide: the previous count is restored on exit.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path

SETTERS = ("scipy_openblas_set_num_threads64_", "openblas_set_num_threads64_", "openblas_set_num_threads")
GETTERS = ("scipy_openblas_get_num_threads64_", "openblas_get_num_threads64_", "openblas_get_num_threads")

_lock = threading.Lock()
_depth = 0
_saved = 0


@cache
def _openblas() -> tuple[ctypes._CFuncPtr, ctypes._CFuncPtr] | None:  # type: ignore[name-defined]
    """(setter, getter) of the OpenBLAS that numpy loaded, or None when there is none to be found."""
    import numpy  # noqa: F401 - loads the BLAS whose entry points are looked up below

    maps = Path("/proc/self/maps")
    if not maps.exists():
        return None
    paths = {line.split()[-1] for line in maps.read_text().splitlines()
             if "openblas" in line.lower() and line.split()[-1].startswith("/")}
    for path in sorted(paths):
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        setter = next((getattr(library, name) for name in SETTERS if hasattr(library, name)), None)
        getter = next((getattr(library, name) for name in GETTERS if hasattr(library, name)), None)
        if setter is not None and getter is not None:
            setter.argtypes, setter.restype = [ctypes.c_int], None
            getter.argtypes, getter.restype = [], ctypes.c_int
            return setter, getter
    return None


@contextmanager
def single_thread() -> Iterator[None]:
    """OpenBLAS on one thread inside the block (nested and concurrent blocks restore the outermost count)."""
    global _depth, _saved
    calls = _openblas()
    if calls is None:
        yield
        return
    setter, getter = calls
    with _lock:
        if _depth == 0:
            _saved = getter()
            setter(1)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                setter(_saved)
