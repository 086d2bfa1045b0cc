"""The worker processes of ``arena up``: started, restarted when one dies, and stopped on one path.

A worker that dies (killed, out of memory, a bug) is started again at once if it had run a while; one
that keeps dying right after it starts is started again after 1, 2, 4 ... 30 s, and the terminal is
told each time, so a broken set-up does not spin a core. Stopping first ends supervision (no restart
while stopping), then asks each worker to stop (RQ's warm shutdown: an idle worker exits at once, a
busy one after its match), and after the grace period kills what is left: a match cut short stays
unfinished in the database, and the reconciler plays it again once its lease has run out.

Each worker leads its own process group (its RQ scheduler process joins it), so one ``killpg`` ends it
whole, and a terminal's Ctrl-C reaches ``arena up`` alone, which then stops the rest in order. Each
holds a lifeline (:mod:`arena.runtime.lifeline`), so none outlives ``arena up`` even when that is SIGKILLed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from arena.runtime.lifeline import LIFELINE_FD_ENV

QUICK_DEATH_S = 10.0  # a worker that dies sooner than this after its start counts as dying at once
MAX_BACKOFF_S = 30.0
POLL_S = 0.25


def restart_delay(quick_deaths: int) -> float:
    """No wait after a worker that ran a while or died at once the first time; then 1, 2, 4 ... 30 s
    while it keeps dying at once."""
    return 0.0 if quick_deaths <= 1 else min(MAX_BACKOFF_S, 2.0 ** (quick_deaths - 2))


def describe_exit(returncode: int) -> str:
    if returncode < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-returncode).name}"
        return f"killed by signal {-returncode}"
    return f"exit code {returncode}"


def has_exited(proc: subprocess.Popen) -> bool:
    """True once ``proc`` has ended, without reaping it: while it is a zombie its pid, which is also its
    process group's id, cannot be reused, so killing that group is still safe."""
    if proc.returncode is not None:
        return True
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def end_group(proc: subprocess.Popen) -> int:
    """SIGKILL the process group ``proc`` leads (what it left behind, or all of it), then reap it."""
    if proc.returncode is not None:  # reaped already: its pid may belong to someone else by now
        return proc.returncode
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    return proc.wait()


@dataclass
class Slot:
    """One worker place: its current process and how it has been dying."""

    number: int
    proc: subprocess.Popen | None = None
    started: float = 0.0
    quick_deaths: int = 0
    restart_at: float | None = None


class Supervisor:
    """``count`` ``arena worker`` processes, kept running until :meth:`stop`."""

    def __init__(self, env: dict[str, str], count: int, say: Callable[[str], None] | None = None,
                 command: list[str] | None = None, output: Callable[[str], None] | None = None,
                 label: str = "worker") -> None:
        self.env = env
        self.label = label  # what the terminal calls these processes ("worker", "ladder scheduler")
        self.command = command or [sys.executable, "-m", "arena.cli", "worker"]
        self.say = say or (lambda line: print(f"arena: {line}", file=sys.stderr, flush=True))
        self.output = output  # given: the workers' output comes here a whole line at a time
        self.slots = [Slot(number=i + 1) for i in range(count)]
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        # only this process holds the write end (os.pipe's ends are not inherited): when this process
        # ends, however it ends, every worker reads end-of-file and kills itself
        self._lifeline_read, self._lifeline_write = os.pipe()

    def start(self) -> None:
        for slot in self.slots:
            self._spawn(slot)
        self._thread = threading.Thread(target=self._run, name="arena-supervisor", daemon=True)
        self._thread.start()

    def _spawn(self, slot: Slot) -> None:
        env = {**self.env, LIFELINE_FD_ENV: str(self._lifeline_read)}
        piped = subprocess.PIPE if self.output is not None else None
        slot.proc = subprocess.Popen(self.command, env=env, stdin=subprocess.DEVNULL, stdout=piped,
                                     stderr=subprocess.STDOUT if piped else None, text=True, errors="replace",
                                     pass_fds=(self._lifeline_read,), process_group=0)
        if self.output is not None:
            threading.Thread(target=self._forward, args=(slot.proc,), name=f"{self.label}-{slot.number}-output",
                             daemon=True).start()
        slot.started = time.monotonic()
        slot.restart_at = None

    def _forward(self, proc: subprocess.Popen) -> None:
        """Every line the worker prints, to ``output``, until it closes its end."""
        assert proc.stdout is not None and self.output is not None
        with proc.stdout:
            for line in proc.stdout:
                with contextlib.suppress(Exception):  # a closed terminal must not stop the reading
                    self.output(line)

    def _run(self) -> None:
        while not self.stopping.wait(POLL_S):
            with self._lock:
                if self.stopping.is_set():
                    return
                try:
                    self.check()
                except Exception as exc:  # a bug here must not end supervision silently
                    self.say(f"supervision round failed: {exc!r}")

    def check(self, now: float | None = None) -> None:
        """One round: notice dead workers, clean up after them and (re)start those whose time has come."""
        now = time.monotonic() if now is None else now
        for slot in self.slots:
            proc = slot.proc
            if proc is not None and has_exited(proc):
                code = end_group(proc)  # its RQ scheduler process would otherwise live on
                slot.proc = None
                lived = now - slot.started
                slot.quick_deaths = slot.quick_deaths + 1 if lived < QUICK_DEATH_S else 0
                delay = restart_delay(slot.quick_deaths)
                slot.restart_at = now + delay
                if delay:
                    self.say(f"{self.label} {slot.number} (pid {proc.pid}) {describe_exit(code)} {lived:.1f} s after "
                             f"its start, {slot.quick_deaths} time(s) in a row; starting it again in {delay:.0f} s")
                else:
                    self.say(f"{self.label} {slot.number} (pid {proc.pid}) {describe_exit(code)}; starting a new one")
            if slot.proc is None and slot.restart_at is not None and now >= slot.restart_at:
                try:
                    self._spawn(slot)
                except OSError as exc:  # e.g. out of file descriptors or memory: back off the same way
                    slot.quick_deaths += 1
                    delay = max(1.0, restart_delay(slot.quick_deaths))
                    slot.restart_at = now + delay
                    self.say(f"{self.label} {slot.number} could not be started ({exc}); trying again in {delay:.0f} s")

    def pids(self) -> list[int]:
        return [slot.proc.pid for slot in self.slots if slot.proc is not None and slot.proc.returncode is None]

    def stop(self, grace_s: float) -> None:
        """End supervision, ask every worker to stop, kill what is left after ``grace_s``."""
        self.stopping.set()
        with self._lock:  # a round in progress finishes; none starts after this
            procs = [slot.proc for slot in self.slots if slot.proc is not None]
        if self._thread is not None:
            self._thread.join(timeout=5)
        for proc in procs:
            if not has_exited(proc):
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        waiting = list(procs)
        while waiting and time.monotonic() < deadline:
            for proc in [p for p in waiting if has_exited(p)]:
                end_group(proc)
                waiting.remove(proc)
            time.sleep(0.05)
        for proc in procs:
            end_group(proc)
        self._close_lifeline()

    def kill(self) -> None:
        """At once, for a second Ctrl-C (may run in a signal handler: takes no lock)."""
        self.stopping.set()
        for slot in list(self.slots):
            if slot.proc is not None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(slot.proc.pid, signal.SIGKILL)

    def _close_lifeline(self) -> None:
        for fd in (self._lifeline_read, self._lifeline_write):
            with contextlib.suppress(OSError):
                os.close(fd)
