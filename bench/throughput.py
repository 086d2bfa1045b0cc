"""Throughput of the queue path: per-match overhead, worker scaling, a worker's memory over many matches.

    python -m bench.throughput overhead [--matches 200] [--stored 0 20000] [--postgres URL]
    python -m bench.throughput scaling  [--matches 480] [--delay-ms 20] [--workers 1 4] [--postgres URL]
    python -m bench.throughput memory   [--matches 10000] [--postgres URL]

overhead: the same matches played in process (``play_match``) and through the queue (enqueue, worker
pick-up, claim, play, record with live Elo and counters, refit request; the coalesced refits run on the
same worker), with 0 and with N previously stored matches. Judged by: (queue - in process) per match
<= 50 ms, at every stored-match count.
scaling: bots that take ``--delay-ms`` per decision; matches per minute with each number of worker processes
in ``--workers`` (e.g. ``1 2 4 8`` for the curve). Judged by: rate(4) / rate(1) >= 3.5.
memory: one worker's resident memory sampled every 2 s while it plays ``--matches`` matches. Judged by:
median RSS over the last 10% of the matches - median over the second 10% <= 10 MiB (the peak is printed).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import insert, select, text

from arena.composition import Context
from arena.config import load_settings
from arena.runtime.queue import MatchQueue, connect
from arena.storage.db import Database
from arena.storage.models import Account, Bot, Match, MatchSeat, MatchStatus, utcnow
from referee.protocol import TimeControls
from referee.runner import BotSpec, play_match
from tests.arena import service_harness as h
from tests.arena.conftest import postgres_database

GAME = "piranha-pedro"


@contextmanager
def arena(postgres: str | None):
    """A fresh database (SQLite file, or a PostgreSQL schema of its own), a Redis of its own."""
    workdir = Path(tempfile.mkdtemp(prefix="arena-bench-"))
    redis = h.RedisServer(workdir)
    redis.start()
    database_cm = postgres_database(postgres) if postgres else _sqlite(workdir)
    with database_cm as db:
        settings = load_settings({}, env="test", data_dir=workdir, secret_key="bench", rate_limits=False,
                                 redis_url=redis.url, match_lease_s=60, decision_ms=5000)
        context = Context(settings=settings, db=db, queue=MatchQueue(connect(redis.url), settings))
        try:
            yield context, workdir
        finally:
            redis.stop()


@contextmanager
def _sqlite(workdir: Path):
    db = Database(f"sqlite:///{workdir / 'arena.db'}")
    db.migrate()
    yield db
    db.dispose()


def store_old_matches(context: Context, count: int, bots: list[int]) -> None:
    """Bulk-insert ``count`` finished matches of the same leaderboard (history the queue path must ignore)."""
    rng = random.Random(5)
    now = utcnow()
    with context.db.session() as session:
        first = (session.scalar(select(Match.id).order_by(Match.id.desc()).limit(1)) or 0) + 1
        matches, seats = [], []
        for i in range(count):
            a, b = rng.sample(bots, 2)
            win = rng.random() < 0.5
            matches.append({"id": first + i, "game": GAME, "num_players": 2, "seed": i, "params": {},
                            "time_limit_ms": 1000, "status": MatchStatus.FINISHED, "attempts": 1, "steps": 20,
                            "result": {"ranks": [1, 2] if win else [2, 1], "scores": [1, 0] if win else [0, 1],
                                       "game_ranks": [1, 2] if win else [2, 1], "forfeited": []},
                            "created_at": now, "finished_at": now, "table_index": 0, "rotation": 0})
            seats += [{"match_id": first + i, "seat": 0, "bot_id": a, "rank": 1 if win else 2, "score": float(win),
                       "decisions": 10, "latency_hist": []},
                      {"match_id": first + i, "seat": 1, "bot_id": b, "rank": 2 if win else 1,
                       "score": float(not win), "decisions": 10, "latency_hist": []}]
        for start in range(0, count, 5000):
            session.execute(insert(Match), matches[start:start + 5000])
            session.execute(insert(MatchSeat), seats[2 * start:2 * start + 10000])  # two seats per match
        if session.get_bind().dialect.name == "postgresql":  # ids given here: move the sequence past them
            session.execute(text("SELECT setval(pg_get_serial_sequence('matches', 'id'), "
                                 "(SELECT max(id) FROM matches))"))


def _register(context: Context, servers: list) -> list[int]:
    with context.db.session() as session:
        existing = session.scalar(select(Account.id).where(Account.name == "owner"))
    if existing is None:
        return h.register_bots(context, servers, GAME)
    with context.db.session() as session:
        return list(session.scalars(select(Bot.id).order_by(Bot.id)))


def queue_rate(context: Context, workdir: Path, bots: list[int], matches: int, workers: int, game: str = GAME,
               seats: int = 2, cycles: int | None = None) -> float:
    """Wall seconds per match through the queue with ``workers`` worker processes already idle."""
    pool = h.Workers(context, workdir)
    pool.start(workers)
    try:
        time.sleep(4)  # let the workers start and idle
        before = h.finished_count(context)
        cycles = cycles or max(1, matches // (len(bots) * (len(bots) - 1)))
        started = time.perf_counter()
        tournament = h.start_tournament(context, {"game": game, "bots": bots, "seats": seats, "cycles": cycles,
                                                        "seed": int(started) % 1000})
        total = h.wait_for(context, tournament, 1800, pool)["total"]
        elapsed = time.perf_counter() - started
        assert h.finished_count(context) - before == total
        return elapsed / total
    finally:
        pool.stop()


def in_process_rate(servers: list, matches: int) -> float:
    specs = [BotSpec(s.url, s.bot.secret or "") for s in servers]
    started = time.perf_counter()
    for i in range(matches):
        a, b = i % len(specs), (i + 1 + i // len(specs)) % len(specs)
        if a == b:
            b = (b + 1) % len(specs)
        play_match(GAME, [specs[a], specs[b]], seed=i, time_controls=TimeControls(decision_ms=5000))
    return (time.perf_counter() - started) / matches


def cmd_overhead(args: argparse.Namespace) -> bool:
    ok = True
    for stored in args.stored:
        with arena(args.postgres) as (context, workdir), h.slow_bots(5, 0) as servers:
            bots = _register(context, servers)
            store_old_matches(context, stored, bots)
            inproc = in_process_rate(servers, args.matches)
            queued = queue_rate(context, workdir, bots, args.matches, 1)
            overhead_ms = (queued - inproc) * 1000
            ok &= overhead_ms <= 50
            print(f"stored {stored:>6}: in process {inproc * 1000:7.1f} ms/match, queue path {queued * 1000:7.1f} "
                  f"ms/match: overhead {overhead_ms:6.1f} ms (goal <= 50): ratio {overhead_ms / 50:.2f} "
                  f"{'PASS' if overhead_ms <= 50 else 'FAIL'}", flush=True)
    return ok


def cmd_scaling(args: argparse.Namespace) -> bool:
    rates = {}
    with arena(args.postgres) as (context, workdir), h.slow_bots(6, args.delay_ms / 1000) as servers:
        bots = _register(context, servers)
        for workers in args.workers:
            per_match = queue_rate(context, workdir, bots, args.matches, workers)
            rates[workers] = 60 / per_match
            print(f"{workers} worker(s): {rates[workers]:7.1f} matches/minute", flush=True)
    base = rates[min(args.workers)]
    for workers, rate in rates.items():
        print(f"{workers} worker(s) / {min(args.workers)}: {rate / base:.2f}x")
    judged = 4 if 4 in rates and 1 in rates else max(args.workers)
    ratio = rates[judged] / base
    print(f"{judged} workers / {min(args.workers)}: {ratio:.2f}x (goal >= 3.5) {'PASS' if ratio >= 3.5 else 'FAIL'}")
    return ratio >= 3.5


def cmd_memory(args: argparse.Namespace) -> bool:
    with arena(args.postgres) as (context, workdir), h.slow_bots(5, 0) as servers:
        bots = _register(context, servers)
        pool = h.Workers(context, workdir)
        pool.start(1)
        pid = pool.procs[0].pid
        samples: list[tuple[int, float]] = []
        try:
            cycles = max(1, args.matches // 20)
            tournament = h.start_tournament(context, {"game": GAME, "bots": bots, "seats": 2, "cycles": cycles,
                                                            "seed": 3})
            total = cycles * 20
            while True:
                done = h.finished_count(context)
                samples.append((done, _rss_mib(pid)))
                if done >= total:
                    break
                time.sleep(2)
            h.wait_for(context, tournament, 600, pool)
        finally:
            pool.stop()
    return judge_memory(samples, total)


def judge_memory(samples: list[tuple[int, float]], total: int) -> bool:
    """Flat means no sustained growth: the median RSS over the last tenth of the matches against the median
    over the second tenth (after warm-up). The peak is printed, not judged: a one-off allocation that is
    given back (RSS falls again within a sample or two) is not growth."""
    early = [rss for done, rss in samples if total // 10 <= done < total // 5]
    late = [rss for done, rss in samples if done >= total - total // 10]
    growth = statistics.median(late) - statistics.median(early)
    peak, peak_at = max((rss, done) for done, rss in samples if done >= total // 10)
    print("RSS MiB by matches done: " + ", ".join(f"{d}:{r:.1f}" for d, r in samples[:: max(1, len(samples) // 20)]))
    print(f"{total} matches, {len(samples)} samples: median RSS {statistics.median(early):.1f} MiB over matches "
          f"{total // 10}-{total // 5}, {statistics.median(late):.1f} MiB over the last {total // 10}; peak "
          f"{peak:.1f} MiB at {peak_at}")
    verdict = "PASS" if growth <= 10 else "FAIL"
    print(f"sustained growth {growth:.1f} MiB (goal <= 10): ratio {growth / 10:.2f} {verdict}")
    return growth <= 10


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    o = sub.add_parser("overhead")
    o.add_argument("--matches", type=int, default=200)
    o.add_argument("--stored", type=int, nargs="+", default=[0, 20000])
    s = sub.add_parser("scaling")
    s.add_argument("--matches", type=int, default=480)  # long enough that the last refit (ARENA_REFIT_DELAY_S) is small
    s.add_argument("--delay-ms", type=float, default=20)
    s.add_argument("--workers", type=int, nargs="+", default=[1, 4])
    m = sub.add_parser("memory")
    m.add_argument("--matches", type=int, default=10000)
    for p in (o, s, m):
        p.add_argument("--postgres", default=None, help="a PostgreSQL URL (default: a SQLite file)")
    args = parser.parse_args(argv)
    ok = {"overhead": cmd_overhead, "scaling": cmd_scaling, "memory": cmd_memory}[args.what](args)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
