"""``arena up`` / ``arena demo`` as a user runs them: a subprocess in its own process group (as a
terminal's foreground job), on the embedded default, with a data folder of the test's own."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import requests

from tests.arena.service_harness import ROOT, free_port


class ArenaProcess:
    """One ``arena COMMAND`` run; :meth:`leftovers` walks the whole process table for what it started."""

    def __init__(self, tmp_path: Path, command: str = "up", *args: str, workers: int = 2,
                 data_dir: Path | None = None, env: dict[str, str] | None = None) -> None:
        self.data_dir = (data_dir or tmp_path / "data").resolve()
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        runs = len(list(tmp_path.glob(f"{command}-*.log")))
        self.log_path = tmp_path / f"{command}-{runs}.log"
        environ = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}  # the embedded default
        # the ladder only where a test asks for it (ARENA_LADDER=1): the others count tournament matches
        # INFO: the tests wait for the processes' log lines ("match started"), which arena demo hides from people
        environ.update({"ARENA_DATA_DIR": str(self.data_dir), "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1",
                        "ARENA_LADDER": "0", "ARENA_LOG_LEVEL": "INFO", **(env or {})})
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "arena.cli", command, "--port", str(self.port), "--workers", str(workers),
                 *args], cwd=ROOT, env=environ, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                process_group=0)
        self.seen: dict[int, psutil.Process] = {}

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_for_output(self, text: str, timeout_s: float = 90) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if text in self.output():
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        raise AssertionError(f"{text!r} never printed:\n{self.output()[-4000:]}")

    def wait_until_serving(self, workers: int = 2, timeout_s: float = 90) -> None:
        """The web app answers and every worker process is running."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"arena exited early:\n{self.output()[-4000:]}"
            try:
                up = requests.get(self.url + "/healthz", timeout=2).status_code == 200
            except requests.RequestException:
                up = False
            if up and len(self.workers()) >= workers:
                return
            time.sleep(0.2)
        raise AssertionError(f"arena did not come up:\n{self.output()[-4000:]}")

    def descendants(self) -> list[psutil.Process]:
        """Everything below the arena process now; remembered, so the test can check them after it ended."""
        try:
            found = psutil.Process(self.proc.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return []
        for proc in found:
            self.seen.setdefault(proc.pid, proc)
        return found

    def workers(self) -> list[psutil.Process]:
        """The ``arena worker`` processes (each a direct child; their RQ scheduler processes are not)."""
        out = []
        for proc in self.descendants():
            try:
                if proc.ppid() == self.proc.pid and "worker" in proc.cmdline():
                    out.append(proc)
            except psutil.NoSuchProcess:
                pass
        return out

    def scheduler(self) -> list[psutil.Process]:
        """The ``arena ladder run`` process (a direct child), when the ladder is on."""
        out = []
        for proc in self.descendants():
            try:
                if proc.ppid() == self.proc.pid and "ladder" in proc.cmdline():
                    out.append(proc)
            except psutil.NoSuchProcess:
                pass
        return out

    def redis_server(self) -> psutil.Process | None:
        for proc in self.descendants():
            try:
                if "redis-server" in proc.name():
                    return proc
            except psutil.NoSuchProcess:
                pass
        return None

    def signal_group(self, sig: int) -> float:
        """As a terminal does on Ctrl-C: to the whole foreground process group. Returns the send time."""
        self.descendants()
        sent = time.monotonic()
        os.killpg(self.proc.pid, sig)
        return sent

    def signal(self, sig: int) -> float:
        """As systemd or docker do: to the arena process alone."""
        self.descendants()
        sent = time.monotonic()
        self.proc.send_signal(sig)
        return sent

    def wait_exit(self, sent: float, timeout_s: float = 20) -> float:
        """Seconds from ``sent`` until the arena process ended."""
        try:
            self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"still running {timeout_s} s later:\n{self.output()[-4000:]}") from None
        return time.monotonic() - sent

    def leftovers(self, timeout_s: float = 5) -> list[str]:
        """What the run started that still lives after ``timeout_s``: every process it was seen to start,
        and every process in the table that carries its data folder (environment or command line)."""
        deadline = time.monotonic() + timeout_s
        while True:
            alive = [p for p in self.seen.values() if _alive(p)] + _holding(self.data_dir)
            found = sorted({f"{p.pid} {_describe(p)}" for p in alive})
            if not found or time.monotonic() >= deadline:
                return found
            time.sleep(0.1)

    def stop(self) -> None:
        """Test clean-up: SIGKILL the group and whatever it left."""
        if self.proc.poll() is None:
            self.descendants()
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
        for proc in [*self.seen.values(), *_holding(self.data_dir)]:
            if _alive(proc):
                proc.kill()


def _alive(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _describe(proc: psutil.Process) -> str:
    try:
        return " ".join(proc.cmdline())[:160]
    except psutil.Error:
        return "?"


def _holding(data_dir: Path) -> list[psutil.Process]:
    """Processes anywhere in the table whose environment or command line names ``data_dir``."""
    found = []
    me = os.getpid()
    for proc in psutil.process_iter():
        if proc.pid == me:
            continue
        try:
            mentions = str(data_dir) in " ".join(proc.cmdline()) or \
                proc.environ().get("ARENA_DATA_DIR") == str(data_dir)
        except (psutil.Error, OSError):
            continue
        if mentions and _alive(proc):
            found.append(proc)
    return found
