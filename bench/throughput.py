"""Throughput of the queue path: per-match overhead, worker scaling, a worker's memory over many matches.

    python -m bench.throughput overhead [--matches 200] [--stored 0 100000] [--postgres URL] [--per-job 16]
    python -m bench.throughput scaling  [--matches 480] [--delay-ms 20] [--workers 1 4] [--postgres URL]
    python -m bench.throughput memory   [--matches 10000] [--postgres URL]
    python -m bench.throughput rq       [--jobs 300]
    (each also takes --hogs N: N busy loops beside the whole run, for issue 19's goals on a loaded machine)

overhead: the same matches played in process (``play_match``) and through the queue (enqueue, worker
pick-up, claim, play, record with live Elo and counters, refit request; the coalesced refits run on the
same worker), with 0 and with N previously stored matches. Judged by: (queue - in process) per match
<= 50 ms, at every stored-match count; and issue 19's goal 4, the worker's own time per match outside
the play as the worker measures it (``bench.timed_worker``) <= 5 ms.
rq: RQ's own cost per job, the floor under the queue path: jobs that do nothing (``len``), enqueued with
the match jobs' options and run by one ``ArenaWorker`` (``--plain``: RQ's ``SimpleWorker``) in this
process; CPU, wall and Redis commands per job (not judged).
scaling: bots that take ``--delay-ms`` per decision; matches per minute with each number of worker processes
in ``--workers`` (e.g. ``1 2 4 8`` for the curve). Judged by: rate(4) / rate(1) >= 3.5.
memory: one worker's resident memory sampled every 2 s while it plays ``--matches`` matches. Judged by:
median RSS over the last 10% of the matches - median over the second 10% <= 10 MiB (the peak is printed).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import statistics
import sys
import tempfile
import time
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from rq.job import Job
from rq.registry import FinishedJobRegistry
from sqlalchemy import insert, select, text

from arena.composition import Context
from arena.config import Settings, load_settings
from arena.runtime.queue import REFIT_FUNCTION, MatchQueue, connect
from arena.services import tournaments
from arena.services.leaderboards import refit
from arena.storage.db import Database
from arena.storage.models import Account, Bot, Match, MatchSeat, MatchStatus, utcnow
from bench.busy import busy_loops
from referee.protocol import TimeControls
from referee.runner import BotSpec, play_match
from tests.arena import service_harness as h
from tests.arena.conftest import postgres_database

GAME = "piranha-pedro"


@contextmanager
def arena(postgres: str | None, matches_per_job: int = Settings.matches_per_job):
    """A fresh database (SQLite file, or a PostgreSQL schema of its own), a Redis of its own; a tournament's
    matches go to the workers in jobs of up to ``matches_per_job`` (``ARENA_MATCHES_PER_JOB``)."""
    workdir = Path(tempfile.mkdtemp(prefix="arena-bench-"))
    redis = h.RedisServer(workdir)
    redis.start()
    database_cm = postgres_database(postgres) if postgres else _sqlite(workdir)
    with database_cm as db:
        settings = load_settings({}, env="test", data_dir=workdir, secret_key="bench", rate_limits=False,
                                 redis_url=redis.url, match_lease_s=60, decision_ms=5000,
                                 matches_per_job=matches_per_job)
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
               seats: int = 2, cycles: int | None = None, cpu: list[float] | None = None,
               steady: list[float] | None = None, own: list[float] | None = None) -> float:
    """Wall seconds per match through the queue with ``workers`` worker processes already idle, from the
    tournament's creation until its last refit; ``cpu``: gets the workers' CPU seconds per match appended
    (user + system, from /proc: the load-proof figure); ``steady``: gets the seconds per match between
    the matches' own finishing times appended (see ``steady_per_match``); ``own``: gets the workers' own
    seconds per match, not playing, as they measured it (``bench.timed_worker``, ``own_per_match``)."""
    timings = workdir / f"timings-{time.monotonic_ns()}.jsonl"
    command = [sys.executable, "-m", "bench.timed_worker"] if own is not None else None
    os.environ["ARENA_BENCH_TIMINGS"] = str(timings)  # (the workers' environment is this one's)
    pool = h.Workers(context, workdir, command)
    pool.start(workers)
    try:
        time.sleep(4)  # let the workers start and idle
        before = h.finished_count(context)
        cycles = cycles or max(1, matches // (len(bots) * (len(bots) - 1)))
        cpu_before = sum(cpu_seconds(proc.pid) for proc in pool.procs)
        started = time.perf_counter()
        tournament = h.start_tournament(context, {"game": game, "bots": bots, "seats": seats, "cycles": cycles,
                                                        "seed": int(started) % 1000})
        played(context, tournament, 1800)
        total = h.wait_for(context, tournament, 1800, pool)["total"]
        elapsed = time.perf_counter() - started
        if cpu is not None:
            cpu.append((sum(cpu_seconds(proc.pid) for proc in pool.procs) - cpu_before) / total)
        assert h.finished_count(context) - before == total
        if steady is not None:
            steady.extend(steady_per_match(context, tournament))
        if own is not None:
            own.append(own_per_match(context, timings))
        return elapsed / total
    finally:
        pool.stop()


def played(context: Context, tournament_id: int, timeout_s: float) -> None:
    """Wait until every match of the tournament is done, asking only that (``tournaments.progress``, on the
    tournament's index) before ``wait_for`` asks whether the leaderboards' fits are fresh too: its check of
    the fits counts every finished match of the board, 15 ms of the database's CPU at 100,000 stored,
    which every 0.2 s landed in the measured worker's gaps (the harness's load, not the arena's)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with context.db.session(readonly=True) as session:
            progress = tournaments.progress(session, tournament_id)
        if progress["done"] + progress["cancelled"] == progress["total"]:
            return
        time.sleep(0.2)
    raise AssertionError(f"tournament {tournament_id} did not finish in {timeout_s} s: {progress}")


def own_per_match(context: Context, timings: Path) -> float:
    """Seconds per match a worker spent on a match but not playing it, as it measured itself: from each
    play's end to the same worker's next play's start, less the leaderboard refits RQ ran meanwhile (goal
    4 counts their request, not the refit), plus the arena's hooks inside the play; over the matches after
    the first tenth (the first pick-up and a cold process left out) up to the last (the idle wait after it)."""
    rows = sorted(json.loads(line) for line in timings.read_text().splitlines())
    plays: dict[int, list[list[float]]] = {}
    for pid, *timing in rows:
        plays.setdefault(pid, []).append(timing)
    refits = _refit_spans(context)
    own: list[float] = []
    cpu: list[float] = []  # the worker thread's CPU in the gaps (the refits' included)
    after: list[int] = []  # the match each gap follows
    new_job: list[bool] = []  # whether the gap ends in another RQ job (RQ's bookkeeping and dequeue are in it)
    for runs in plays.values():
        runs.sort()
        pairs = list(itertools.pairwise(runs))[len(runs) // 10:]
        for (_start, end, hooks, _c0, cpu_end, match_id, job), (following, *_, cpu_next, _c1, _next, next_job) in pairs:
            gap = following - end
            gap -= _refit_seconds(refits, datetime.fromtimestamp(end, UTC), datetime.fromtimestamp(following, UTC))
            own.append(gap + hooks)
            cpu.append(cpu_next - cpu_end)
            after.append(match_id)
            new_job.append(job != next_job)
    if os.environ.get("ARENA_BENCH_GAPS"):  # where the time goes: the spread of the gaps
        ordered = sorted(own)
        p90, hooks = ordered[int(len(ordered) * 0.9)], statistics.median(r[3] for r in rows)
        print(f"  gaps (ms): median {statistics.median(ordered) * 1000:.2f}, p90 {p90 * 1000:.2f}, max "
              f"{ordered[-1] * 1000:.2f}, the 5 longest {[round(x * 1000, 1) for x in ordered[-5:]]}, hooks median "
              f"{hooks * 1000:.2f}; the worker thread's CPU in a gap: median {statistics.median(cpu) * 1000:.2f}, "
              f"mean {statistics.mean(cpu) * 1000:.2f}", flush=True)
        closing = _closed_their_deal(context, after)
        for label, chosen in (("sealed", False), ("published its deal", True)):
            picked = [(gap, used) for gap, used, match_id, other_job in zip(own, cpu, after, new_job, strict=True)
                      if closing.get(match_id, False) == chosen and not other_job]
            _print_gaps(f"after a match that {label}, within a job", picked)
        _print_gaps("between two jobs", [(gap, used) for gap, used, other_job in zip(own, cpu, new_job, strict=True)
                                         if other_job])
    return sum(own) / max(len(own), 1)


def _print_gaps(label: str, picked: list[tuple[float, float]]) -> None:
    if picked:
        gaps, used = [g * 1000 for g, _ in picked], [u * 1000 for _, u in picked]
        print(f"    {label} ({len(picked)}): gap median {statistics.median(gaps):.2f}, mean "
              f"{statistics.mean(gaps):.2f}, {sum(gaps):.0f} in all; the worker thread's CPU median "
              f"{statistics.median(used):.2f}", flush=True)


def _closed_their_deal(context: Context, ids: list[int]) -> dict[int, bool]:
    """Whether each match was its deal's last to be stored (so its record published the deal), by the
    matches' stored times (the other matches of a tournament's deal share its seed). With one worker, as
    ``overhead`` runs; twins stored at the same moment by two workers could be told apart wrongly."""
    with context.db.session(readonly=True) as session:
        rows = session.execute(select(Match.id, Match.tournament_id, Match.seed, Match.finished_at)
                               .where(Match.id.in_(ids))).all()
        deals = {(r.tournament_id, r.seed) for r in rows}
        last: dict[tuple[int, int], int] = {}
        for other in session.execute(select(Match.id, Match.tournament_id, Match.seed, Match.finished_at)
                                     .where(Match.tournament_id.in_({t for t, _ in deals}))
                                     .order_by(Match.finished_at, Match.id)):
            last[(other.tournament_id, other.seed)] = other.id
    return {r.id: last.get((r.tournament_id, r.seed)) == r.id for r in rows}


def steady_per_match(context: Context, tournament_id: int) -> tuple[float, float]:
    """Seconds per match while the workers are busy, and the same less the leaderboard refits that ran
    meanwhile: from the first tenth's last match to the last match, by the times the matches were stored.
    It leaves out what a run pays once, not per match: creating the tournament, the workers' first pick-up
    and the last refit, which waits ``ARENA_REFIT_DELAY_S`` (2 s) after the last match (11 ms a match over
    200 matches). The refits between matches are coalesced jobs of their own, their length set by the
    board's size (``REFIT_SHARE``), not by the match: the second figure takes their time out (RQ's record
    of each refit job's start and end), as issue 19's goal 4 counts the refit's request, not the refit."""
    with context.db.session(readonly=True) as session:
        times = sorted(_utc(t) for t in session.scalars(select(Match.finished_at)
                                                        .where(Match.tournament_id == tournament_id)))
    skip = max(1, len(times) // 10)
    start, end = times[skip - 1], times[-1]
    window, count = (end - start).total_seconds(), len(times) - skip
    return window / count, (window - _refit_seconds(_refit_spans(context), start, end)) / count


def _refit_spans(context: Context) -> list[tuple[datetime, datetime]]:
    """When each refit job ran (finished ones, as RQ recorded them)."""
    assert context.queue is not None
    registry = FinishedJobRegistry(queue=context.queue.queue)
    return [(_utc(job.started_at), _utc(job.ended_at))
            for job in Job.fetch_many(registry.get_job_ids(), connection=context.queue.redis)
            if job is not None and job.func_name == REFIT_FUNCTION and job.started_at and job.ended_at]


def _refit_seconds(spans: list[tuple[datetime, datetime]], start: datetime, end: datetime) -> float:
    """Seconds of the refit ``spans`` inside ``start``-``end``."""
    return sum(max(0.0, (min(end, ended) - max(start, began)).total_seconds()) for began, ended in spans)


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


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
        with arena(args.postgres, args.per_job) as (context, workdir), h.slow_bots(5, 0) as servers:
            bots = _register(context, servers)
            store_old_matches(context, stored, bots)
            if stored:  # as a live arena would have it: the board's outcome store and fit already built
                refit(context.db, GAME, 2)
            inproc = in_process_rate(servers, args.matches)
            cpu: list[float] = []
            steady: list[float] = []
            own: list[float] = []
            queued = queue_rate(context, workdir, bots, args.matches, 1, cpu=cpu, steady=steady, own=own)
            overhead_ms = (queued - inproc) * 1000
            steady_ms = (steady[1] - inproc) * 1000
            ok &= overhead_ms <= 50
            print(f"stored {stored:>6}: in process {inproc * 1000:7.1f} ms/match, queue path {queued * 1000:7.1f} "
                  f"ms/match: overhead {overhead_ms:6.1f} ms (goal <= 50): ratio {overhead_ms / 50:.2f} "
                  f"{'PASS' if overhead_ms <= 50 else 'FAIL'}; worker CPU {cpu[0] * 1000:.1f} ms/match", flush=True)
            print(f"stored {stored:>6}: steady state {steady[0] * 1000:7.1f} ms/match, {steady[1] * 1000:.1f} less "
                  f"the refits, {steady_ms:.1f} more than in process (measured apart: not judged)", flush=True)
            own_ms = own[0] * 1000
            print(f"stored {stored:>6}: the worker's own time per match, not playing (from a play's end to its next "
                  f"play's start, less refits, plus its hooks in the play), as it measured itself: {own_ms:.2f} ms "
                  f"(issue 19 goal 4: <= 5): ratio {own_ms / 5:.2f} {'PASS' if own_ms <= 5 else 'FAIL'}", flush=True)
    return ok


def cmd_rq(args: argparse.Namespace) -> bool:
    from redis.connection import AbstractConnection
    from rq import Queue, SimpleWorker

    from arena.runtime.worker import ArenaWorker
    workdir = Path(tempfile.mkdtemp(prefix="arena-bench-"))
    server = h.RedisServer(workdir)
    server.start()
    try:
        redis = connect(server.url)
        settings = load_settings({}, env="test", data_dir=workdir, secret_key="bench", redis_url=server.url)
        queue = MatchQueue(redis, settings)
        queue.queue.enqueue_many([Queue.prepare_data("builtins.len", ("abc",), job_id=f"noop-{i}",
                                                     result_ttl=args.result_ttl,
                                                     failure_ttl=7 * 24 * 3600, timeout=settings.job_timeout_s)
                                  for i in range(args.jobs)])
        worker = (SimpleWorker if args.plain else ArenaWorker)([queue.queue], connection=redis)
        redis.config_resetstat()
        trips = [0]
        send = AbstractConnection.send_packed_command

        def counted(self, *a, **k):  # type: ignore[no-untyped-def]
            trips[0] += 1  # one call per command sent alone, one per pipeline
            return send(self, *a, **k)

        AbstractConnection.send_packed_command = counted  # type: ignore[method-assign]
        cpu, wall = time.process_time(), time.perf_counter()
        try:
            worker.work(burst=True, logging_level="WARNING")
        finally:
            AbstractConnection.send_packed_command = send  # type: ignore[method-assign]
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        calls = sum(stat["calls"] for stat in redis.info("commandstats").values())
        print(f"RQ {type(worker).__name__}, {args.jobs} jobs that do nothing (result_ttl {args.result_ttl}): CPU "
              f"{cpu / args.jobs * 1000:.2f} ms/job, wall {wall / args.jobs * 1000:.2f} ms/job, "
              f"{calls / args.jobs:.1f} Redis commands/job in {trips[0] / args.jobs:.1f} round trips")
    finally:
        server.stop()
    return True


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


def cpu_seconds(pid: int) -> float:
    """A process's CPU seconds so far (user + system, every thread)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


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
    o.add_argument("--stored", type=int, nargs="+", default=[0, 100000])
    o.add_argument("--per-job", type=int, default=Settings.matches_per_job,
                   help="matches per RQ job (ARENA_MATCHES_PER_JOB, default 16; 1: one each)")
    s = sub.add_parser("scaling")
    s.add_argument("--matches", type=int, default=480)  # long enough that the last refit (ARENA_REFIT_DELAY_S) is small
    s.add_argument("--delay-ms", type=float, default=20)
    s.add_argument("--workers", type=int, nargs="+", default=[1, 4])
    m = sub.add_parser("memory")
    m.add_argument("--matches", type=int, default=10000)
    for p in (o, s, m):
        p.add_argument("--postgres", default=None, help="a PostgreSQL URL (default: a SQLite file)")
    r = sub.add_parser("rq")
    r.add_argument("--jobs", type=int, default=300)
    r.add_argument("--plain", action="store_true", help="RQ's SimpleWorker, not the arena's worker class")
    r.add_argument("--result-ttl", type=int, default=3600, help="the jobs' result_ttl (the match jobs: 3600)")
    for p in (o, s, m, r):
        p.add_argument("--hogs", type=int, default=0, help="busy loops beside the whole run")
    args = parser.parse_args(argv)
    with busy_loops(args.hogs):
        ok = {"overhead": cmd_overhead, "scaling": cmd_scaling, "memory": cmd_memory, "rq": cmd_rq}[args.what](args)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
