"""Everything ``arena up`` and ``arena demo`` run, and the one way they stop.

The web app is served from a thread of this process, the workers are supervised children
(:mod:`arena.runtime.supervisor`), the embedded Redis is a child too (:mod:`arena.runtime.embedded`). The main thread
only waits, so a signal is handled at once: the first SIGINT (Ctrl-C), SIGTERM (systemd, docker) or
SIGHUP (the terminal closed) prints ``stopping...`` and stops everything in order within about
``STOP_GRACE_S`` seconds; a second one kills the children and exits at once.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from arena.composition import Context, build_context
from arena.config import Settings
from arena.runtime.embedded import EmbeddedRedis
from arena.runtime.supervisor import Supervisor

STOP_GRACE_S = 3.0  # for a match in flight to finish; an idle worker needs up to ~2 s (its RQ scheduler's stop)
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def worker_env(settings: Settings) -> dict[str, str]:
    """The settings a worker process needs, through its environment."""
    env = dict(os.environ)
    env.update({
        "ARENA_ENV": settings.env,
        "ARENA_DATA_DIR": str(settings.data_dir.resolve()),
        "ARENA_DATABASE_URL": settings.resolved_database_url,
        "ARENA_REDIS_URL": settings.redis_url,
        "ARENA_SECRET_KEY": settings.secret_key,
        "ARENA_ALLOW_LOOPBACK_BOTS": "1" if settings.allow_loopback_bots else "0",
        "ARENA_LADDER": "1" if settings.ladder else "0",
    })
    return env


@dataclass
class Stack:
    """Services started for ``arena up`` / ``arena demo``; :meth:`stop` ends them all."""

    settings: Settings
    workers: int
    redis: EmbeddedRedis | None = None
    context: Context | None = None
    supervisor: Supervisor | None = None
    scheduler: Supervisor | None = None  # the ladder scheduler process (ARENA_LADDER, on by default)
    server: Any = None
    stop_requested: threading.Event = field(default_factory=threading.Event)
    stopped: bool = False
    output: Callable[[str], None] | None = None  # given: the workers' lines come here (``terminal.say``)
    scheduler_args: tuple[str, ...] = ()  # extra arguments of ``arena ladder run``

    # -- signals -------------------------------------------------------------------------------------

    def install_signal_handlers(self) -> None:
        """First signal: stop in order; second: at once. Call before starting anything."""
        for sig in STOP_SIGNALS:
            signal.signal(sig, self._on_signal)

    def _on_signal(self, signum: int, _frame: Any) -> None:
        # os.write, not print: a handler may interrupt a print of the main thread (re-entrant buffer)
        if self.stop_requested.is_set():
            _write(sys.stderr, "\narena: stopping now, without waiting for anything\n")
            self.kill()
            os._exit(130)
        self.stop_requested.set()
        _write(sys.stdout, f"\nstopping... (a match in flight gets {STOP_GRACE_S:.0f} s to finish, "
                           "unfinished ones are played at the next start; Ctrl-C again stops at once)\n")

    # -- start ---------------------------------------------------------------------------------------

    def start(self, host: str, port: int) -> Context:
        """Embedded Redis (unless ARENA_REDIS_URL is set), migrated database, web server, workers."""
        from werkzeug.serving import make_server

        from arena.web import create_app

        if not self.settings.redis_url:
            self.redis = EmbeddedRedis(self.settings.data_dir)
            self.redis.start()
            self.settings = replace(self.settings, redis_url=self.redis.url)
        self.context = build_context(self.settings)
        if self.settings.ladder:  # the pages list them at once; the scheduler would make them a moment later
            from arena.services.ladders import ensure_ladders

            with self.context.db.session() as session:
                ensure_ladders(session, self.settings)
        try:
            self.server = make_server(host, port, create_app(context=self.context), threaded=True)
        except OSError as exc:
            self.stop(quiet=True)
            raise SystemExit(f"arena: cannot listen on {host}:{port}: {exc}") from None
        except SystemExit:  # werkzeug said why (e.g. the port is in use) and exits
            self.stop(quiet=True)
            raise
        self.supervisor = Supervisor(worker_env(self.settings), self.workers, output=self.output)
        self.supervisor.start()
        if self.settings.ladder:
            self.scheduler = Supervisor(worker_env(self.settings), 1, output=self.output, label="ladder scheduler",
                                        command=self.scheduler_command())
            self.scheduler.start()
        threading.Thread(target=self.server.serve_forever, name="arena-web", daemon=True).start()
        return self.context

    def scheduler_command(self) -> list[str]:
        return [sys.executable, "-m", "arena.cli", "ladder", "run", *self.scheduler_args]

    @property
    def redis_label(self) -> str:
        return "embedded" if self.redis else self.settings.redis_url

    # -- wait and stop -------------------------------------------------------------------------------

    def wait(self) -> None:
        """Until a stop signal (the main thread stays free to handle it)."""
        while not self.stop_requested.wait(0.5):
            pass

    def stop(self, quiet: bool = False) -> float:
        """Web server, then workers (``STOP_GRACE_S`` for matches in flight), then Redis; returns seconds."""
        if self.stopped:
            return 0.0
        self.stopped = True
        started = time.monotonic()
        closing = None
        if self.server is not None:  # stops accepting while the workers stop
            closing = threading.Thread(target=self.server.shutdown, name="arena-web-stop", daemon=True)
            closing.start()
        scheduling = None
        if self.scheduler is not None:  # alongside the workers: its tick ends within a second
            scheduling = threading.Thread(target=self.scheduler.stop, args=(STOP_GRACE_S,),
                                          name="arena-ladder-stop", daemon=True)
            scheduling.start()
        if self.supervisor is not None:
            self.supervisor.stop(STOP_GRACE_S)
        if scheduling is not None:
            scheduling.join(timeout=STOP_GRACE_S + 1)
        if closing is not None:
            closing.join(timeout=2)
            self.server.server_close()
        if self.context is not None and self.context.live is not None:
            self.context.live.close()  # before Redis: else its subscription says "lost" while the arena stops
        if self.redis is not None:
            self.redis.stop()
        elapsed = time.monotonic() - started
        if not quiet:
            with contextlib.suppress(OSError):  # the terminal may be gone (SIGHUP)
                print(f"arena: stopped in {elapsed:.1f} s", flush=True)
        return elapsed

    def kill(self) -> None:
        """At once (second signal): every child SIGKILLed, nothing waited for."""
        if self.scheduler is not None:
            self.scheduler.kill()
        if self.supervisor is not None:
            self.supervisor.kill()
        if self.redis is not None:
            self.redis.kill()


def _write(stream: Any, text: str) -> None:
    with contextlib.suppress(OSError, ValueError):  # a closed terminal must not break the stop
        os.write(stream.fileno(), text.encode())
