"""The worker's own work per match, without RQ: the job functions called in a loop on queued matches,
in batches of ``--batch`` (``run_matches_job``, as a tournament's are queued; 1: ``run_match_job`` each).

    python -m bench.worker_loop [--cycles 10] [--stored 0] [--postgres URL] [--profile out.txt]
                                [--game piranha-pedro --seats 2] [--batch 16]

Four instant bots (``tests.bot_zoo.polite``) in a process of their own, so that this process does only
what a worker does per match: claim, play, record (publication, live Elo, outcome store, standings,
counters), the live feed, the refit request. Prints per match: SQL statements, this thread's CPU time
and wall time, each in all and outside ``play_match`` (the referee's part), and the connections to bots
the seats opened (a batch hands its idle ones from match to match: ``referee.connection_keeper``). The
statement count does not depend on the machine's load; CPU time does (a loaded core is slower), so compare
runs made together.
For instruction counts: ``valgrind --tool=callgrind --instr-atstart=no python -m bench.worker_loop
--callgrind`` (instrumentation is switched on for the loop alone; Ir / matches is the figure). Per phase
of the match (claim, store, each recorder, commits, ...): ``valgrind --tool=callgrind --instr-atstart=no
--callgrind-out-file=DIR/cg python -m bench.worker_loop --callgrind --phases DIR``
(``bench.callgrind_phases``). With ``--postgres`` on this host, ``--server-cpu`` adds PostgreSQL's own CPU per
match (the database works on the same cores: part of what the worker waits for is its CPU).
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import gc
import os
import subprocess
import sys
import time
import types
from pathlib import Path

from sqlalchemy import event, select

import arena.services.matches as matches_service
from arena.config import Settings
from arena.runtime import jobs
from arena.runtime.live_bus import LiveBus
from arena.services import live_feed
from arena.storage.models import Bot, Match, MatchSeat
from bench import callgrind_phases
from bench.throughput import arena, store_old_matches
from referee import connect_ahead
from referee.bot_transport import BotConnection
from referee.connection_keeper import ConnectionKeeper
from referee.runner import BotSpec
from tests.arena import service_harness as h

GAME = "piranha-pedro"
BOTS = 4
WARM_UP = 5
SERVE = """
import sys, threading, time
from tests import bot_zoo
servers = [bot_zoo.ZooServer(bot_zoo.polite) for _ in range(int(sys.argv[1]))]
for s in servers:
    s.requests = type("Forget", (list,), {"append": lambda self, item: None})()  # no growth over many matches
    threading.Thread(target=s.serve_forever, daemon=True).start()
print(" ".join(s.url for s in servers), flush=True)
sys.stdin.read()
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cycles", type=int, default=10, help="round-robin cycles (12 matches each)")
    parser.add_argument("--stored", type=int, default=0, help="finished matches stored on the board first")
    parser.add_argument("--postgres", default=None, help="a PostgreSQL URL (default: a SQLite file)")
    parser.add_argument("--game", default=GAME)
    parser.add_argument("--seats", type=int, default=2)
    parser.add_argument("--batch", type=int, default=Settings.matches_per_job,
                        help="matches per job (ARENA_MATCHES_PER_JOB's default, 16)")
    parser.add_argument("--trace", action="store_true", help="print each SQL statement of the first timed match")
    parser.add_argument("--statement-times", action="store_true",
                        help="the wall time per statement (from the cursor's execute to its return), by statement")
    parser.add_argument("--server-cpu", action="store_true",
                        help="with --postgres, on this host: PostgreSQL's own CPU per match, by statement (its "
                             "backends' /proc/PID/schedstat across each execute) and in all (every server process)")
    parser.add_argument("--drop-indexes", action="store_true",
                        help="an experiment: drop the secondary indexes of matches first (what their upkeep costs)")
    parser.add_argument("--no-live-feed", action="store_true",
                        help="an experiment: matches played without their spectators' feed (``live_feed.match_feed``: "
                             "a match page's boards and steps; the deal's announcements stay): what the feed costs")
    parser.add_argument("--hold-idle", action="store_true",
                        help="an experiment: idle connections to bots are not closed as a match starts without their "
                             "bots (``ConnectionKeeper.drop_idle``), only past ``MAX_IDLE_S`` or when the batch ends: "
                             "what the connections the schedule makes a batch open anew cost")
    parser.add_argument("--profile", default=None, help="write a pyinstrument profile of the loop here")
    parser.add_argument("--play-only", action="store_true",
                        help="only the referee's part: play_match on the same matches, nothing stored")
    parser.add_argument("--callgrind", action="store_true", help="switch callgrind's instrumentation on for the loop")
    parser.add_argument("--phases", default=None,
                        help="with --callgrind: the directory of --callgrind-out-file; report instructions per phase")
    args = parser.parse_args(argv)
    if args.server_cpu and not args.postgres:
        parser.error("--server-cpu measures a PostgreSQL server on this host: give --postgres URL")
    bots_proc = subprocess.Popen([sys.executable, "-c", SERVE, str(BOTS)], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True)
    try:
        urls = bots_proc.stdout.readline().split()  # type: ignore[union-attr]
        servers = [types.SimpleNamespace(url=url, bot=types.SimpleNamespace(secret=None)) for url in urls]
        with arena(args.postgres) as (context, _workdir):
            run(args, context, servers)
    finally:
        bots_proc.kill()
        bots_proc.wait()
    return 0


def run(args: argparse.Namespace, context, servers: list) -> None:  # type: ignore[no-untyped-def]
    bots = h.register_bots(context, servers, args.game)
    store_old_matches(context, args.stored, bots)
    if args.drop_indexes:
        _drop_match_indexes(context)
    tournament = h.start_tournament(context, {"game": args.game, "bots": bots, "seats": args.seats,
                                              "cycles": args.cycles,
                                              "seed": 1})
    with context.db.session() as session:
        ids = list(session.scalars(select(Match.id).where(Match.tournament_id == tournament).order_by(Match.id)))
    context.queue.redis.flushdb()  # the worker here is this loop: no RQ job runs
    context = dataclasses.replace(context, live=LiveBus(context.queue.redis, context.settings.queue_name,
                                                        context.settings.live_streams))
    if args.callgrind:  # what depends on the clock stays as at full speed (a match takes seconds under valgrind):
        # no lease renewal, no second look at a hidden board; else instructions would follow the slowdown
        context = dataclasses.replace(context, settings=dataclasses.replace(context.settings, match_lease_s=3600))
        live_feed.RECHECK_S = float("inf")
    if args.no_live_feed:
        live_feed.match_feed = lambda *_a, **_k: None  # (run_match then plays with no spectators' hook)
    if args.hold_idle:
        ConnectionKeeper.drop_idle = lambda _self: None  # type: ignore[method-assign]
    opened, ahead = _count_connections()
    jobs.set_worker_context(context)
    play = [0.0, 0.0]
    played = matches_service.play_match

    def timed_play(*a, **k):  # type: ignore[no-untyped-def]
        cpu, wall = time.thread_time(), time.perf_counter()
        try:
            return played(*a, **k)
        finally:
            play[0] += time.thread_time() - cpu
            play[1] += time.perf_counter() - wall

    matches_service.play_match = timed_play
    for match_id in ids[:WARM_UP]:
        jobs.run_match_job(match_id)
    ids = ids[WARM_UP:]
    statements: collections.Counter[str] = collections.Counter()
    event.listen(context.db.engine, "before_cursor_execute",
                 lambda _c, _cur, sql, *_: statements.update([sql.split(None, 1)[0].upper()]))
    if args.trace:
        traced = {"left": 1}
        event.listen(context.db.engine, "before_cursor_execute",
                     lambda _c, _cur, sql, *_: traced["left"] > 0 and print("  SQL", " ".join(sql.split())[:160]))
        event.listen(context.db.engine, "commit",  # (an autocommit unit's commit sends nothing)
                     lambda _c: traced["left"] > 0 and print("  commit (the session's)"))
        done = jobs._play

        def trace_one(*a, **k):  # type: ignore[no-untyped-def]
            try:
                return done(*a, **k)
            finally:
                traced["left"] -= 1
        jobs._play = trace_one
    timed = _time_statements(context) if args.statement_times else None
    server = ServerCpu(context) if args.server_cpu else None
    phases = _phases(context) if args.phases else None
    if phases is not None:
        event.listen(context.db.engine, "before_cursor_execute", lambda *_: phases.statement())
    profiler = None
    if args.profile:
        import pyinstrument
        profiler = pyinstrument.Profiler(interval=0.0005)
        profiler.start()
    play[0] = play[1] = 0.0
    opened.clear()
    if args.callgrind:
        subprocess.run(["callgrind_control", "--instr=on", str(os.getpid())], check=True, capture_output=True)
    pauses = GcPauses()
    cpu, wall, process = time.thread_time(), time.perf_counter(), time.process_time()
    for start in range(0, len(ids), max(1, args.batch)):
        batch = ids[start:start + max(1, args.batch)]
        if args.play_only:
            for match_id in batch:
                _play_alone(context, match_id)
        elif len(batch) == 1:
            assert jobs.run_match_job(batch[0]) == "recorded", batch
        else:
            assert jobs.run_matches_job(batch) == ["recorded"] * len(batch), batch
    cpu, wall, process = time.thread_time() - cpu, time.perf_counter() - wall, time.process_time() - process
    if server is not None:
        server.stop()
    pauses.stop()
    if phases is not None:
        phases.mark()
    if args.callgrind:
        subprocess.run(["callgrind_control", "--instr=off", str(os.getpid())], check=True, capture_output=True)
    if profiler is not None:
        profiler.stop()
        with open(args.profile, "w") as out:
            out.write(profiler.output_text(unicode=False, color=False))
    n = len(ids)
    kinds = ", ".join(f"{kind} {count / n:.1f}" for kind, count in statements.most_common())
    where = "PostgreSQL" if args.postgres else "SQLite"
    print(f"{where}, {args.stored} stored, {n} matches: {sum(statements.values()) / n:.1f} statements/match ({kinds})")
    print(f"  per match: CPU {cpu / n * 1000:.2f} ms ({(cpu - play[0]) / n * 1000:.2f} outside play_match), "
          f"wall {wall / n * 1000:.2f} ms ({(wall - play[1]) / n * 1000:.2f} outside play_match); the process's "
          f"other threads (lease keepers, the live publisher) {(process - cpu) / n * 1000:.2f} ms CPU", flush=True)
    print(f"  connections to bots opened: {sum(opened) / n:.2f} per match at /start, {sum(ahead) / n:.2f} ahead of "
          f"it, while the match before was recorded (``connect_ahead``); the rest of the seats' calls went on "
          f"connections kept from the match before", flush=True)
    print(f"  {pauses.summary()}", flush=True)
    if timed is not None:
        print("  wall per match by statement (ms, the driver's execute and the database's work):")
        for sql, (count, seconds) in sorted(timed.items(), key=lambda kv: -kv[1][1]):
            print(f"    {seconds / n * 1000:6.3f} ms in {count / n:4.2f} x  {sql}")
    if server is not None:
        print(server.report(n))
    if phases is not None:
        print(callgrind_phases.report(callgrind_phases.read_dumps(Path(args.phases)), phases.statements, n))


def _time_statements(context) -> dict[str, list[float]]:  # type: ignore[no-untyped-def]
    """Per statement (its first words), how many ran and their wall time in the driver's execute; the start
    is kept on the connection (each thread has its own), so the lease renewals' statements pair up right.
    Statements sent together (``read_together``) are timed as one, from the first one's send to their answers."""
    timed: dict[str, list[float]] = {}

    def before(conn, _cur, sql, *_rest) -> None:  # type: ignore[no-untyped-def]
        _opened(conn, "bench_began", sql, time.perf_counter)

    def after(conn, *_rest) -> None:  # type: ignore[no-untyped-def]
        closed = conn.info.pop("bench_began", None)
        if closed is not None:  # (None: a later statement of a group timed already)
            entry = timed.setdefault(closed[0], [0, 0.0])
            entry[0] += 1
            entry[1] += time.perf_counter() - closed[1]

    event.listen(context.db.engine, "before_cursor_execute", before)
    event.listen(context.db.engine, "after_cursor_execute", after)
    return timed


def _opened(conn, key: str, sql: str, start) -> None:  # type: ignore[no-untyped-def]
    """Before a statement: what it is and ``start()``, kept on the connection under ``key`` until its after.
    Statements sent together (``read_together``) hear every before first, then every after: one entry for the
    group, named after all of them, counted once."""
    words = " ".join(sql.split()[:6])[:90]
    group = conn.info.get(key)
    if group is None:
        conn.info[key] = [words, start(), [words]]
    else:
        group[2].append(words)
        group[0] = "together: " + " + ".join(" ".join(each.split()[:2]) for each in group[2])


def _on_cpu_ns(pid: int) -> int:
    """A process's time on a CPU so far, in ns (the scheduler's own count: finer than the clock ticks of stat)."""
    try:
        with open(f"/proc/{pid}/schedstat") as stats:
            return int(stats.read().split()[0])
    except (OSError, ValueError, IndexError):  # (a process that ended meanwhile)
        return 0


class ServerCpu:
    """PostgreSQL's own CPU for the worker's statements: the database shares the machine's cores with the
    worker, so its work is part of what the worker waits for. Per statement: its backend's time on a CPU
    across the driver's execute. In all: every process of the server (backends, WAL writer, checkpointer,
    autovacuum workers alive at both ends), from the loop's start to its end; what is not in a statement is
    the BEGINs, COMMITs (their WAL flush), the pool's pings (of idle connections), the background processes,
    the pipelined writes (``db.pipelined``: their execute returns before the server works on them; their work
    lands in the next statement's window or here). Other clients of the same server count in the whole too.
    The two reads of /proc a statement are the worker's work: its own CPU and wall in such a run are a little
    high."""

    def __init__(self, context) -> None:  # type: ignore[no-untyped-def]
        self.by_statement: dict[str, list[float]] = {}
        found = subprocess.run(["pgrep", "-o", "-x", "postgres"], capture_output=True, text=True).stdout.split()
        if not found:
            raise SystemExit("--server-cpu: no postgres process on this host")
        self.postmaster = int(found[0])
        engine = self.engine = context.db.engine
        self.floor: dict[str, float] = {}

        children = set(self._all())

        def before(conn, _cur, sql, *_rest) -> None:  # type: ignore[no-untyped-def]
            pid = conn.connection.driver_connection.info.backend_pid
            if pid not in children:  # (a new backend since: it must be this server's)
                children.update(self._all())
                if pid not in children:
                    raise SystemExit(f"--server-cpu: backend {pid} is not a child of postgres {self.postmaster} "
                                     "on this host (another server, or one in a container?)")
            _opened(conn, "bench_backend", sql, lambda: (pid, _on_cpu_ns(pid)))

        def after(conn, *_rest) -> None:  # type: ignore[no-untyped-def]
            closed = conn.info.pop("bench_backend", None)
            if closed is not None:  # (None: a later statement of a group counted already)
                (pid, began) = closed[1]
                entry = self.by_statement.setdefault(closed[0], [0, 0.0])
                entry[0] += 1
                entry[1] += (_on_cpu_ns(pid) - began) / 1e9

        event.listen(engine, "before_cursor_execute", before)
        event.listen(engine, "after_cursor_execute", after)
        self.began = self._all()
        self.total = 0.0

    def _all(self) -> dict[int, int]:
        children = subprocess.run(["pgrep", "-P", str(self.postmaster)], capture_output=True, text=True).stdout
        return {pid: _on_cpu_ns(pid) for pid in [self.postmaster, *map(int, children.split())]}

    def stop(self) -> None:
        ended = self._all()
        self.total = sum(ns - self.began.get(pid, 0) for pid, ns in ended.items() if pid in self.began) / 1e9
        self.floor = _server_floor(self.engine)

    def report(self, matches: int) -> str:
        in_statements = sum(seconds for _count, seconds in self.by_statement.values())
        lines = [f"  PostgreSQL's CPU per match: {self.total / matches * 1000:.2f} ms in all, "
                 f"{in_statements / matches * 1000:.2f} ms in the statements' executes:"]
        for sql, (count, seconds) in sorted(self.by_statement.items(), key=lambda kv: -kv[1][1]):
            lines.append(f"    {seconds / matches * 1000:6.3f} ms in {count / matches:4.2f} x  {sql}")
        lines.append("  the server's CPU for the least it can be asked, afterwards on one connection (median of 300): "
                     + ", ".join(f"{what} {us:.0f} us" for what, us in self.floor.items()))
        return "\n".join(lines)


def _server_floor(engine) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """PostgreSQL's CPU (its backend's, microseconds) for a round trip that asks nothing (``SELECT 1``) and for
    a one-row UPDATE of an unindexed column committed on its own, durably and not: the floor under each of the
    worker's round trips and commits. An engine of its own: the loop's statement counters are not told."""
    from sqlalchemy import create_engine, text
    own = create_engine(engine.url)
    with own.connect() as conn:
        conn = conn.execution_options(isolation_level="AUTOCOMMIT")
        pid = conn.connection.driver_connection.info.backend_pid
        conn.exec_driver_sql("CREATE TABLE bench_floor (id integer PRIMARY KEY, v integer)")
        conn.exec_driver_sql("INSERT INTO bench_floor VALUES (1, 0)")
        probes = {"a round trip (SELECT 1)": [text("SELECT 1")],
                  "a durable one-row UPDATE": [text("UPDATE bench_floor SET v = v + 1 WHERE id = 1")],
                  "the same not waiting for its WAL": [text("SET synchronous_commit = off"),
                                                       text("UPDATE bench_floor SET v = v + 1 WHERE id = 1"),
                                                       text("SET synchronous_commit = on")]}
        floor = {}
        for what, statements in probes.items():
            spent = []
            for _ in range(320):
                began = _on_cpu_ns(pid)
                for statement in statements:
                    conn.execute(statement)
                spent.append(_on_cpu_ns(pid) - began)
            floor[what] = sorted(spent[20:])[150] / 1000
        floor["the same not waiting for its WAL"] -= 2 * floor["a round trip (SELECT 1)"]  # (its two SETs)
        conn.exec_driver_sql("DROP TABLE bench_floor")
    own.dispose()
    return floor


def _drop_match_indexes(context) -> None:  # type: ignore[no-untyped-def]
    from sqlalchemy import inspect, text
    names = [index["name"] for index in inspect(context.db.engine).get_indexes("matches")]
    with context.db.engine.begin() as conn:
        for name in names:
            conn.execute(text(f'DROP INDEX "{name}"'))
    print(f"dropped the {len(names)} secondary indexes of matches", flush=True)


class GcPauses:
    """The garbage collector's pauses while the loop runs: a pause stops every thread of the worker, the
    referee's included, so a bot's answer read after one may be judged late."""

    def __init__(self) -> None:
        self.pauses: list[tuple[int, float]] = []
        self._began = 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict) -> None:  # type: ignore[type-arg]
        if phase == "start":
            self._began = time.perf_counter()
        else:
            self.pauses.append((info["generation"], time.perf_counter() - self._began))

    def stop(self) -> None:
        gc.callbacks.remove(self._callback)

    def summary(self) -> str:
        by_gen = {g: [d for gen, d in self.pauses if gen == g] for g in (0, 1, 2)}
        parts = [f"gen{g} {len(ds)}x, longest {max(ds, default=0) * 1000:.1f} ms" for g, ds in by_gen.items()]
        return (f"garbage collections: {'; '.join(parts)} ({len(gc.get_objects())} objects tracked, "
                f"{gc.get_freeze_count()} frozen)")


def _count_connections() -> tuple[list[int], list[int]]:
    """A 1 appended for every connection a seat opens (``BotConnection._connect``), from any thread; and for
    every one the batch opens ahead of a match (``connect_ahead``)."""
    opened: list[int] = []
    ahead: list[int] = []
    connect, open_one = BotConnection._connect, connect_ahead._open

    def counted(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        opened.append(1)  # (list.append: atomic under the interpreter's lock, from the call pool's threads too)
        return connect(self, *args, **kwargs)

    def counted_ahead(*args, **kwargs):  # type: ignore[no-untyped-def]
        ahead.append(1)
        return open_one(*args, **kwargs)

    BotConnection._connect = counted  # type: ignore[method-assign]
    connect_ahead._open = counted_ahead  # type: ignore[assignment]
    return opened, ahead


def _phases(context) -> callgrind_phases.Phases:  # type: ignore[no-untyped-def]
    """Wrap the worker's steps in named phases (``bench.callgrind_phases``)."""
    from sqlalchemy.orm import Session

    from arena.services import publication, recorders
    phases = callgrind_phases.Phases()
    ms = matches_service
    for owner, name, label in [
        (jobs, "run_match_job", "job, run_match (rest)"), (ms, "claim", "claim: UPDATE"),
        (ms, "seat_specs", "claim: seats"), (ms, "claim_ahead", "claim ahead: UPDATE"),
        (ms, "claimed_deal", "claim: deal"), (live_feed, "announce_deal", "announce_deal"),
        (live_feed, "match_feed", "live feed: set up"), (live_feed.MatchFeed, "__call__", "live feed: steps"),
        (ms, "play_match", "play_match"), (ms._LeaseKeeper, "__enter__", "lease keeper"),
        (ms._LeaseKeeper, "__exit__", "lease keeper"), (ms, "store", "store (rest)"),
        (ms, "redact_replay", "store: redact"), (ms, "compress", "store: compress"),
        (ms, "close_deal", "close_deal (rest)"), (ms, "settle_deal", "close_deal (rest)"),
        (publication, "lock_board", "close_deal: lock_board"), (publication, "_deal_rows", "close_deal: deal read"),
        (ms, "read_together", "store: seal, claim ahead, deal read"),
        (publication, "recall", "close_deal: twin replay"), (publication, "void_reason", "close_deal: void_reason"),
        (publication, "publish_many", "publish (rest)"),
        (recorders.Published, "load_many", "publish: Published.load"),
        (ms.tournaments, "finish_tournament_if_done", "finish_tournament_if_done"),
        (Session, "commit", "commit"), (Session, "close", "session close"),
        (context.queue, "request_refit", "refit request"),
    ]:
        if hasattr(owner, name):  # (names of other versions of the worker are skipped)
            phases.patch(owner, name, label)
    recorders.RATED = tuple((name, phases.wrap(f"publish: {name}", fn)) for name, fn in recorders.RATED)
    return phases


def _play_alone(context, match_id: int) -> None:  # type: ignore[no-untyped-def]
    with context.db.session(readonly=True) as session:
        match = session.get(Match, match_id)
        seats = session.execute(select(Bot.url, Bot.secret, Bot.name, Bot.id)
                                .join(MatchSeat, MatchSeat.bot_id == Bot.id)
                                .where(MatchSeat.match_id == match_id).order_by(MatchSeat.seat))
        bots = [BotSpec(url=url, secret=secret, name=name, bot_id=bot_id) for url, secret, name, bot_id in seats]
    matches_service.play_match(match.game, bots, match.seed, dict(match.params),
                               context.settings.time_controls(match.time_limit_ms), match_id=f"m{match_id}")


if __name__ == "__main__":
    sys.exit(main())
