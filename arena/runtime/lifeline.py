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
import fcntl
import os
import select
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


def signal_group_on_eof(fd: int) -> bool:
    """Linux, in a process that leads its group: have the kernel itself end the group (SIGIO, whose default
    action terminates) once the pipe's last writer is gone, with no Python thread to be scheduled first. A
    worker busy importing on a loaded machine kept its watching thread from the GIL for over 5 s (CI:
    test_sigkill_of_arena_up_leaves_nothing_and_the_next_start_works). The signal's owner is set per open
    file, and the workers share the one they were handed: each opens the pipe again for its own. False
    where this cannot be had (the watching thread is then the only way)."""
    if not sys.platform.startswith("linux") or os.getpgrp() != os.getpid():
        return False
    try:
        own = os.open(f"/proc/self/fd/{fd}", os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
        fcntl.fcntl(own, fcntl.F_SETOWN, -os.getpgrp())
        fcntl.fcntl(own, fcntl.F_SETFL, fcntl.fcntl(own, fcntl.F_GETFL) | os.O_ASYNC)
    except OSError:
        return False
    _kept.append(own)  # open for the process's life
    if select.select([own], [], [], 0)[0]:  # the writer was gone already: no signal will come for it
        os.killpg(os.getpgrp(), signal.SIGKILL)
    return True


_kept: list[int] = []


def watch_lifeline(fd: int) -> threading.Thread:
    """In a child: when the parent holding the pipe's write end dies, kill this process group (by the
    kernel's signal where it can, ``signal_group_on_eof``, and from a thread everywhere)."""
    signal_group_on_eof(fd)

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


_watching: list[threading.Thread] = []  # the process's one watch (``python -m arena.cli`` starts it first)


def watch_lifeline_from_env() -> threading.Thread | None:
    """Start :func:`watch_lifeline` if the parent passed a lifeline (``arena up`` does), once a process."""
    value = os.environ.get(LIFELINE_FD_ENV, "")
    if not value.isdigit():
        return None
    if not _watching:
        _watching.append(watch_lifeline(int(value)))
    return _watching[0]


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
