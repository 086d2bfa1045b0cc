"""The ladder end to end on the embedded default (issue 17, benchmark 4): ``arena up``, 8 bots submitted
through the API (7 heuristic, 1 random: the deliberately weak one), no tournament.

Measured: each bot's first match start after its submission answered; when every bot has rated matches;
when the weak bot is last with its 95% interval apart from the best bot's; and, after kill -9 of the
ladder scheduler and of one worker mid-way, that every ladder match scheduled was finished or cancelled
exactly once (no table doubled or short of a rotation, every finished match rated once, no deal left
sealed). Run: ``python -m bench.ladder e2e`` (or ``python -m bench.ladder_e2e``); loopback only.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path
from typing import Any

import psutil
import requests
from sqlalchemy import func, select

from arena.storage.db import Database
from arena.storage.models import BoardOutcome, BoardOutcomeBlock, LiveRating, Match, MatchSeat, MatchStatus
from sample_bots import heuristic_bot, random_bot
from sample_bots.sdk import BotServer, start_in_thread

ROOT = Path(__file__).resolve().parents[1]
GAME, PLAYERS = "piranha-pedro", 3
OPEN = (MatchStatus.SCHEDULED, MatchStatus.QUEUED, MatchStatus.RUNNING)
RECOVERY_S = 45  # the separation is judged this long after the kills: the killed worker's lease (30 s) ran out


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Arena:
    """``arena up`` on a data folder of its own, the embedded default, the ladder on."""

    def __init__(self, data_dir: Path, workers: int) -> None:
        self.data_dir = data_dir
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
        self.env.update({"ARENA_DATA_DIR": str(data_dir), "ARENA_LADDER": "1", "PYTHONPATH": str(ROOT)})
        self.log = open(data_dir / "arena-up.log", "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen([sys.executable, "-m", "arena.cli", "up", "--port", str(self.port),
                                      "--workers", str(workers)], cwd=ROOT, env=self.env, stdout=self.log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, process_group=0)

    def wait_serving(self, timeout_s: float = 120) -> None:
        """The web app answers and the ladder scheduler has taken its lock (on a loaded machine a process
        may take 10 s to import its libraries: submissions before that would time the start-up)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                if requests.get(self.url + "/healthz", timeout=2).status_code == 200 and \
                        "active scheduler" in (self.data_dir / "arena-up.log").read_text(errors="replace"):
                    return
            except requests.RequestException:
                pass
            time.sleep(0.2)
        raise SystemExit("arena up did not come up; see " + str(self.data_dir / "arena-up.log"))

    def children(self, word: str) -> list[psutil.Process]:
        found = []
        for proc in psutil.Process(self.proc.pid).children():
            try:
                if word in proc.cmdline():
                    found.append(proc)
            except psutil.NoSuchProcess:
                pass
        return found

    def api(self, method: str, path: str, token: str | None = None, **kwargs: Any) -> requests.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return requests.request(method, self.url + path, headers=headers, timeout=30, **kwargs)

    def cli(self, *args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "arena.cli", *args], cwd=ROOT, env=self.env, check=True,
                              capture_output=True, text=True)
        return done.stdout

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self.log.close()


def _first_starts(db: Database, bots: dict[int, float]) -> dict[int, float]:
    """Seconds from each bot's submission (or, for the first ones, from the submission that gave it
    enough opponents for a table) to the start of its first match, for the bots that started one."""
    with db.session(readonly=True) as session:
        rows = session.execute(select(MatchSeat.bot_id, func.min(Match.started_at)).join(Match)
                               .where(MatchSeat.bot_id.in_(list(bots)), Match.started_at.is_not(None))
                               .group_by(MatchSeat.bot_id)).all()
    enough = sorted(bots.values())[PLAYERS - 1]
    out = {}
    for bot_id, started in rows:
        started = started if started.tzinfo else started.replace(tzinfo=UTC)
        out[bot_id] = started.timestamp() - max(bots[bot_id], enough)
    return out


def _stages(db: Database, data_dir: Path, bots: dict[int, float], names: dict[int, str]) -> dict[str, Any]:
    """Where each bot's wait for its first match went, in seconds: from its submission's answer to the
    scheduler's tick that created its table (the wake and the tick's start), to the enqueue after the commit
    that released it (the tick, or the wait for its opponents' room), to a worker taking the job from the
    queue (the wait for a free worker), to the claim that starts the match (``Match.started_at``)."""
    from redis import Redis
    from rq.exceptions import NoSuchJobError
    from rq.job import Job

    from arena.runtime.embedded import socket_path
    from arena.runtime.queue import job_id

    def seconds(moment: datetime | None) -> float | None:
        if moment is None:
            return None
        return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()

    with db.session(readonly=True) as session:
        firsts = session.execute(select(MatchSeat.bot_id, Match.id, Match.created_at, Match.started_at)
                                 .join(Match).where(MatchSeat.bot_id.in_(list(bots)), Match.started_at.is_not(None))
                                 .order_by(Match.started_at)).all()
    redis = Redis(unix_socket_path=str(socket_path(data_dir)))
    enough = sorted(bots.values())[PLAYERS - 1]
    out: dict[str, Any] = {}
    for bot_id, match_id, created, started in firsts:
        if names[bot_id] in out:
            continue
        try:
            job = Job.fetch(job_id(match_id), connection=redis)
            enqueued, dequeued = seconds(job.enqueued_at), seconds(job.started_at)
        except NoSuchJobError:
            enqueued = dequeued = None
        marks = [max(bots[bot_id], enough), seconds(created), enqueued, dequeued, seconds(started)]
        out[names[bot_id]] = [None if a is None or b is None else round(b - a, 3)
                              for a, b in pairwise(marks)]
    redis.close()
    return out


def _audit(db: Database) -> dict[str, Any]:
    """Every ladder match scheduled: finished or cancelled exactly once."""
    with db.session(readonly=True) as session:
        statuses = dict(session.execute(select(Match.status, func.count()).where(Match.ladder_id.is_not(None))
                                        .group_by(Match.status)).all())
        tables = session.execute(select(Match.ladder_id, Match.seed, func.count(),
                                        func.count(func.distinct(Match.rotation)))
                                 .where(Match.ladder_id.is_not(None)).group_by(Match.ladder_id, Match.seed)).all()
        finished = statuses.get(MatchStatus.FINISHED, 0)
        rated_seats = session.scalar(select(func.coalesce(func.sum(LiveRating.games), 0))
                                     .where(LiveRating.game == GAME, LiveRating.players == PLAYERS))
        outcomes = session.scalar(select(func.count()).select_from(BoardOutcome)
                                  .where(BoardOutcome.game == GAME, BoardOutcome.players == PLAYERS))
        blocks = session.scalar(select(func.coalesce(func.sum(BoardOutcomeBlock.matches), 0))
                                .where(BoardOutcomeBlock.game == GAME, BoardOutcomeBlock.players == PLAYERS))
    bad_tables = [(ladder, seed) for ladder, seed, count, rotations in tables
                  if count != PLAYERS or rotations != PLAYERS]
    return {"statuses": {str(k): v for k, v in statuses.items()}, "tables": len(tables),
            "tables_doubled_or_short": len(bad_tables), "finished": finished,
            "rated_once": rated_seats == PLAYERS * finished, "outcomes_stored": outcomes + blocks,
            "open": sum(statuses.get(s, 0) for s in OPEN), "sealed": statuses.get(MatchStatus.SEALED, 0)}


def run(workers: int, timeout_s: float, kill_after_s: float) -> dict[str, Any]:
    servers: list[BotServer] = []
    figures: dict[str, Any] = {"workers": workers, "bots": 8, "game": GAME, "players": PLAYERS}
    with tempfile.TemporaryDirectory(prefix="ladder-e2e-") as folder:
        arena = Arena(Path(folder), workers)
        try:
            arena.wait_serving()
            db = Database(f"sqlite:///{Path(folder) / 'arena.db'}")
            submitted: dict[int, float] = {}
            names: dict[int, str] = {}
            started = time.time()
            for i in range(8):
                weak = i == 7
                server = start_in_thread(random_bot.make_bot(i) if weak else heuristic_bot.make_bot(i))
                servers.append(server)
                name = "weak-random" if weak else f"heuristic-{i}"
                # one owner's bots never share a ladder table: each bot its own owner
                token = arena.api("POST", "/api/accounts", json={"name": f"owner-{i}"}).json()["token"]
                sent = time.time()
                answer = arena.api("POST", "/api/bots", token, json={"name": name, "url": server.url, "game": GAME})
                answer.raise_for_status()
                figures.setdefault("submission_s", []).append(round(time.time() - sent, 2))  # its health check
                server.bot.secret = answer.json()["secret"]  # its owner restarts it with the secret and resumes it
                arena.api("POST", f"/api/bots/{answer.json()['id']}/resume", token).raise_for_status()
                submitted[answer.json()["id"]] = time.time()
                names[answer.json()["id"]] = name
            weak_id = next(b for b, n in names.items() if n == "weak-random")
            all_rated_s = apart_s = killed_at = None
            board: dict[str, Any] = {}
            while time.time() - started < timeout_s:
                board = arena.api("GET", f"/api/leaderboards/{GAME}?players={PLAYERS}").json()
                entries = board["entries"]
                now = time.time() - started
                if all_rated_s is None and len(entries) == 8 and all(e["games"] > 0 for e in entries):
                    all_rated_s = now
                if killed_at is None and (now >= kill_after_s or all_rated_s is not None):
                    scheduler, worker = arena.children("ladder")[0], arena.children("worker")[0]
                    scheduler.send_signal(signal.SIGKILL)
                    worker.send_signal(signal.SIGKILL)
                    killed_at = now
                if len(entries) == 8 and killed_at is not None and now >= killed_at + RECOVERY_S:
                    weak = next(e for e in entries if e["bot_id"] == weak_id)
                    best = entries[0]
                    if weak["rank"] == 8 and weak["elo_high"] < best["elo_low"]:
                        apart_s = now
                        break
                time.sleep(1.0)
            figures["first_match_s"] = {names[b]: round(s, 3) for b, s in _first_starts(db, submitted).items()}
            figures["first_match_max_s"] = max(figures["first_match_s"].values(), default=None)
            figures["first_match_stages_s"] = _stages(db, Path(folder), submitted, names)
            figures["all_rated_s"] = None if all_rated_s is None else round(all_rated_s, 1)
            figures["weak_last_and_apart_s"] = None if apart_s is None else round(apart_s, 1)
            figures["killed_scheduler_and_worker_at_s"] = None if killed_at is None else round(killed_at, 1)
            figures["leaderboard"] = [(e["rank"], names.get(e["bot_id"]), round(e["elo"]), round(e["elo_low"]),
                                       round(e["elo_high"]), e["games"]) for e in board.get("entries", [])]
            ladder_id = next(lad["id"] for lad in arena.api("GET", "/api/ladders").json()
                             if lad["game"] == GAME and lad["players"] == PLAYERS)
            arena.cli("ladder", "pause", str(ladder_id), "--reason", "benchmark over")
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and _audit(db)["open"]:
                time.sleep(0.5)
            time.sleep(1.0)  # the last deal's publication
            figures["audit"] = _audit(db)
            db.dispose()
        finally:
            arena.stop()
            for server in servers:
                server.shutdown()
                server.server_close()
    return figures


def verdict(figures: dict[str, Any]) -> list[str]:
    """What failed, in words (empty: everything held)."""
    audit = figures["audit"]
    failed = []
    if figures["first_match_max_s"] is None or figures["first_match_max_s"] > 2.0:
        failed.append(f"a first match started {figures['first_match_max_s']} s after submission (> 2 s)")
    if figures["all_rated_s"] is None or figures["all_rated_s"] > 60:
        failed.append(f"every bot rated after {figures['all_rated_s']} s (> 60 s)")
    if figures["weak_last_and_apart_s"] is None or figures["weak_last_and_apart_s"] > 600:
        failed.append("the weak bot was not last and apart from the best bot within 10 minutes")
    if audit["open"] or audit["sealed"] or audit["tables_doubled_or_short"] or not audit["rated_once"]:
        failed.append(f"matches lost, doubled or left open: {audit}")
    if audit["outcomes_stored"] != audit["finished"]:
        failed.append(f"{audit['outcomes_stored']} outcomes stored for {audit['finished']} finished matches")
    return failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=3, help="as arena up's default")
    parser.add_argument("--timeout", type=float, default=600, help="seconds for the weak bot to separate")
    parser.add_argument("--kill-after", type=float, default=45,
                        help="kill -9 of the scheduler and a worker once every bot is rated, or after this")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    print(f"ladder e2e: arena up (embedded Redis + SQLite, {args.workers} workers), 8 bots through the API, "
          f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC; the machine may be shared", flush=True)
    figures = run(args.workers, args.timeout, args.kill_after)
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print(f"submission (health check included) took: {figures['submission_s']} s")
        print(f"first match after submission: max {figures['first_match_max_s']} s  {figures['first_match_s']}")
        print("first match, by stage (s): answer->tick created its table, ->enqueued (tick; opponents' room), "
              "->worker took it (a free worker), ->claimed")
        for name, stages in figures["first_match_stages_s"].items():
            print(f"   {name:14} {stages}")
        print(f"every bot rated after: {figures['all_rated_s']} s")
        print(f"kill -9 of the ladder scheduler and a worker at: {figures['killed_scheduler_and_worker_at_s']} s")
        print(f"weak bot last, interval apart from the best bot's, after: {figures['weak_last_and_apart_s']} s")
        for row in figures["leaderboard"]:
            print("   rank {}  {:14} {:>5} [{:>5}, {:>5}]  {:>4} games".format(*row))
        print(f"audit: {figures['audit']}")
    failed = verdict(figures)
    for line in failed:
        print(f"FAILED: {line}")
    print("all checks held" if not failed else f"{len(failed)} check(s) failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
