"""Tie a child process's life to the ``arena up`` that started it, however that one ends (even SIGKILL).

Two ways, because the children differ:

* Python children (``arena worker``) get the read end of a pipe whose write end only the parent holds.
  When the parent dies the kernel closes it, the read returns end-of-file, and the worker kills its own
  process group: itself and the RQ scheduler process it forked. Works on every POSIX system and does
  not care which thread of the parent started the child.
* ``redis-server`` cannot watch a pipe, so it is started through ``python -m arena.runtime.lifeline PID -- CMD``,
  which asks Linux for a parent-death signal (``PR_SET_PDEATHSIG``, kept across ``exec``) and then
  becomes CMD. Elsewhere the embedded Redis is reaped from its pid file at the next start instead.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import sys
import threading
from collections.abc import Sequence

LIFELINE_FD_ENV = "ARENA_LIFELINE_FD"
PR_SET_PDEATHSIG = 1


def set_parent_death_signal(sig: int = signal.SIGTERM) -> bool:
    """Ask Linux to send ``sig`` when the parent exits; False where there is no such thing."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def watch_lifeline(fd: int) -> threading.Thread:
    """In a child: when the parent holding the pipe's write end dies, kill this process group."""

    def wait_for_eof() -> None:
        with contextlib.suppress(OSError):
            while os.read(fd, 1):
                pass
        if os.getpgrp() == os.getpid():  # our own group: take the RQ scheduler process along
            os.killpg(os.getpgrp(), signal.SIGKILL)
        os.kill(os.getpid(), signal.SIGKILL)

    thread = threading.Thread(target=wait_for_eof, name="arena-lifeline", daemon=True)
    thread.start()
    return thread


def watch_lifeline_from_env() -> threading.Thread | None:
    """Start :func:`watch_lifeline` if the parent passed a lifeline (``arena up`` does)."""
    value = os.environ.get(LIFELINE_FD_ENV, "")
    return watch_lifeline(int(value)) if value.isdigit() else None


def main(argv: Sequence[str]) -> int:
    """``python -m arena.runtime.lifeline PARENT_PID -- CMD ARGS...``: exec CMD, to die with PARENT_PID."""
    if len(argv) < 3 or argv[1] != "--" or not argv[0].isdigit():
        print("usage: python -m arena.runtime.lifeline PARENT_PID -- CMD [ARGS...]", file=sys.stderr)
        return 2
    set_parent_death_signal(signal.SIGTERM)
    if os.getppid() != int(argv[0]):  # the parent died before the signal was asked for
        return 1
    os.execv(argv[2], list(argv[2:]))
    return 1  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
