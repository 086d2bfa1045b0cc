"""Instructions per phase of a worker's match, from callgrind: where the worker's own work goes.

``bench.worker_loop --phases`` under ``valgrind --tool=callgrind --instr-atstart=no`` wraps the worker's
steps (the claim, playing, storing, each recorder of publishing, the commits, the live feed, the refit
request) in named phases. At every phase boundary a callgrind client request dumps the instructions
counted since the previous boundary, labelled with the phase that was running, so each phase gets its
own instructions (a nested phase's are its own, not its parent's). Instruction counts do not depend on
the machine's load. The client request lives in a tiny C library built here with gcc and valgrind's
headers (``valgrind-dev``/``valgrind`` packages); outside valgrind it does nothing.
"""

from __future__ import annotations

import collections
import ctypes
import functools
import re
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

SOURCE = r"""
#include <valgrind/callgrind.h>
void cg_dump(const char *label) { CALLGRIND_DUMP_STATS_AT(label); }
"""


class Phases:
    """A stack of named phases; ``wrap`` makes a function one. ``statement`` counts an SQL statement
    against the running phase."""

    def __init__(self) -> None:
        lib_dir = Path(tempfile.mkdtemp(prefix="cgmark-"))
        (lib_dir / "cgmark.c").write_text(SOURCE)
        subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-o", str(lib_dir / "cgmark.so"), str(lib_dir / "cgmark.c")],
                       check=True)
        self._dump = ctypes.CDLL(str(lib_dir / "cgmark.so")).cg_dump
        self._dump.argtypes = [ctypes.c_char_p]
        self.stack = ["outside"]
        self.statements: collections.Counter[str] = collections.Counter()

    def mark(self) -> None:
        """Attribute what ran since the last boundary to the running phase."""
        self._dump(self.stack[-1].encode())

    def wrap(self, label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def phase(*args: Any, **kwargs: Any) -> Any:
            self.mark()
            self.stack.append(label)
            try:
                return fn(*args, **kwargs)
            finally:
                self.mark()
                self.stack.pop()

        return phase

    def patch(self, owner: Any, name: str, label: str) -> None:
        setattr(owner, name, self.wrap(label, getattr(owner, name)))

    def statement(self) -> None:
        self.statements[self.stack[-1]] += 1


_DESC = re.compile(r"^desc: Trigger: Client Request: (.*)$", re.M)
_TOTAL = re.compile(r"^(?:summary|totals): (\d+)", re.M)


def read_dumps(directory: Path) -> collections.Counter[str]:
    """Instructions per phase label, summed over the dumps in ``directory``. A dump counts every thread
    of the process: the other threads' instructions (the live publisher, the lease keeper) land in the
    phase the main thread was in while they ran (mostly ``play_match``)."""
    out: collections.Counter[str] = collections.Counter()
    for path in directory.iterdir():
        text = path.read_text(errors="replace")
        desc, total = _DESC.search(text), _TOTAL.search(text)
        if desc and total:
            out[desc.group(1).strip()] += int(total.group(1))
    return out


def report(counts: collections.Counter[str], statements: collections.Counter[str], matches: int) -> str:
    total = sum(counts.values())
    lines = [f"{'phase':<34} {'M instr/match':>14} {'share':>6} {'stmts/match':>12}"]
    for label, ir in counts.most_common():
        lines.append(f"{label:<34} {ir / matches / 1e6:14.2f} {ir / total:6.1%} {statements[label] / matches:12.1f}")
    lines.append(f"{'all':<34} {total / matches / 1e6:14.2f} {'':>6} {sum(statements.values()) / matches:12.1f}")
    return "\n".join(lines)
