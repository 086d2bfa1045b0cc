"""Spectators of live pages: 1,000 server-sent event streams on one live process while matches are played.

    python -m bench.spectators [--spectators 1000] [--matches 24] [--delay-ms 20] [--workers 2]

The production shape on this machine: a Redis of its own, SQLite, ``--workers`` ``arena worker`` processes,
bots that take ``--delay-ms`` per decision, and ONE live process (gunicorn -c deploy/gunicorn_live.conf.py,
gevent worker, ARENA_LIVE_WORKERS=1). A tournament of the same size (independent deals, so every match is shown
live) is played three times: without spectators, with ``--spectators`` streams held open by a client
process (asyncio, niced: it stands for browsers elsewhere), spectator i following match i mod M, and
without again (a warm-up tournament is played first, unmeasured). Measured:

- delay: from the worker applying a step (the event's ``at``) to the client reading the event, over every
  event every spectator received (and how many of the events they should have received arrived); judged
  by p99 < 500 ms;
- throughput: matches per second with spectators / without (the mean of the two runs); judged by >= 0.95;
- memory: the live process's resident memory with the spectators connected (idle) minus before, per spectator.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import psutil
import requests

from tests.arena import service_harness as h
from tests.deploy.proxy_harness import compose

GAME = "piranha-pedro"


# -- the spectators' process: asyncio, one connection per spectator ------------------------------------------

STEP_TIME = re.compile(rb'"at":(\d+)')


async def _spectate(port: int, topic: str, delays: list[float], ready: list[int]) -> None:
    """One spectator: reads its stream in whole chunks (a browser's cost, not a parser's) and notes, for
    every event that carries its step's time, how long after the step it arrived."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET /live/{topic} HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\n\r\n".encode())
    await writer.drain()
    counted, tail = False, b""
    while True:
        chunk = await reader.read(65536)
        if not chunk:
            return
        received = time.time() * 1000
        if not counted and b"retry:" in chunk:
            counted = True
            ready[0] += 1
        text = tail + chunk
        end = text.rfind(b"\n\n")  # whole events only; the rest waits for the next chunk
        if end < 0:
            tail = text
            continue
        tail = text[end + 2:]
        delays.extend(received - int(at) for at in STEP_TIME.findall(text, 0, end))


async def _spectators(port: int, topics: list[str], out: Path) -> None:
    delays: list[float] = []
    ready = [0]
    tasks = []
    for topic in topics:
        tasks.append(asyncio.create_task(_spectate(port, topic, delays, ready)))
        if len(tasks) % 50 == 0:
            await asyncio.sleep(0.05)  # as a crowd arrives, not as one burst of SYNs
    while ready[0] < len(topics):
        await asyncio.sleep(0.1)
    print(f"connected {ready[0]}", flush=True)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    out.write_text(json.dumps(delays))
    os._exit(0)  # the open streams need no goodbye


# -- the driver --------------------------------------------------------------------------------------------

def start_live_process(env: dict[str, str], port: int, log: Path) -> subprocess.Popen:
    program, *args = compose()["services"]["live"]["command"]
    env = {**env, "ARENA_LIVE_BIND": f"127.0.0.1:{port}", "ARENA_LIVE_WORKERS": "1"}
    with open(log, "wb") as out:
        proc = subprocess.Popen([str(Path(sys.executable).parent / program), *args], cwd=h.ROOT, env=env,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 60
    while True:
        try:
            if requests.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                return proc
        except requests.RequestException:
            pass
        assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
        time.sleep(0.2)


def live_worker_rss(proc: subprocess.Popen) -> float:
    """Resident memory (MiB) of the live process's one worker (gunicorn's master forks it)."""
    children = psutil.Process(proc.pid).children()
    return sum(child.memory_info().rss for child in children) / 2**20


def tournament(context, bots: list[int], cycles: int, seed: int) -> tuple[int, list[int]]:
    from sqlalchemy import select

    from arena.services.accounts import create_account
    from arena.services.tournaments import create_tournament
    from arena.storage.models import Account, Match

    with context.db.session() as session:
        organizer = session.scalar(select(Account).where(Account.name == "organizer"))
        if organizer is None:
            organizer, _ = create_account(session, "organizer", admin=True)
        tournament_id = create_tournament(session, organizer, {"game": GAME, "bots": bots, "seats": 2, "cycles": cycles,
                                                               "deals": "independent", "seed": seed},
                                          context.settings.deal_key()).id
    with context.db.session() as session:
        ids = list(session.scalars(select(Match.id).where(Match.tournament_id == tournament_id).order_by(Match.id)))
    return tournament_id, ids


def play(context, pool, tournament_id: int) -> float:
    """Queue the tournament; seconds until every match is recorded."""
    from arena.services.tournaments import queue_tournament

    started = time.perf_counter()
    with context.db.session() as session:
        queue_tournament(session, context.queue, tournament_id)
    h.wait_for(context, tournament_id, 1800, pool)
    return time.perf_counter() - started


def expected_events(context, topics: list[str]) -> int:
    """Board events the spectators should have read: every step of each match (and its first board) once
    per spectator following it."""
    from collections import Counter

    from sqlalchemy import select

    from arena.storage.models import Match

    watchers = Counter(int(topic.split("-")[1]) for topic in topics)
    with context.db.session(readonly=True) as session:
        steps = dict(session.execute(select(Match.id, Match.steps).where(Match.id.in_(list(watchers)))).all())
    return sum((steps[match] + 1) * count for match, count in watchers.items())


def run(args: argparse.Namespace) -> bool:
    from sqlalchemy import select

    from arena.storage.models import Bot
    from bench.throughput import arena

    with arena(None) as (context, workdir), h.slow_bots(4, args.delay_ms / 1000) as servers:
        # the workers' reconciler would queue the second tournament before its spectators are in: not here
        context.settings = replace(context.settings, reconcile_interval_s=3600)
        bots = h.register_bots(context, servers, GAME)
        with context.db.session(readonly=True) as session:
            assert len(session.scalars(select(Bot.id)).all()) == 4
        cycles = max(1, args.matches // 12)  # 4 bots, 2 seats: 12 matches a cycle
        live_port = h.free_port()
        live = start_live_process(h.worker_env(context), live_port, workdir / "live.log")
        pool = h.Workers(context, workdir)
        pool.start(args.workers)
        client = None
        try:
            time.sleep(4)  # the workers start and idle
            play(context, pool, tournament(context, bots, 1, seed=3)[0])  # warm-up: first jobs, caches, refits
            first, _ = tournament(context, bots, cycles, seed=1)
            alone = play(context, pool, first)
            second, ids = tournament(context, bots, cycles, seed=2)
            rss_before = live_worker_rss(live)
            topics = [f"match-{ids[i % len(ids)]}" for i in range(args.spectators)]
            results = workdir / "delays.json"
            # the spectators' own process stands for browsers on other machines: it runs niced, so that its
            # parsing does not take the two cores from the workers as remote browsers would not either
            client = subprocess.Popen(["nice", "-n", "10", sys.executable, "-m", "bench.spectators", "--client",
                                       str(live_port),
                                       str(results), *topics], cwd=h.ROOT, stdout=subprocess.PIPE, text=True)
            line = client.stdout.readline() if client.stdout else ""
            assert line.startswith("connected"), line
            time.sleep(2)
            rss_after = live_worker_rss(live)
            watched = play(context, pool, second)
            time.sleep(1)  # the last events arrive
            client.send_signal(signal.SIGTERM)
            client.wait(timeout=60)
            delays = sorted(json.loads(results.read_text()))
            expected = expected_events(context, topics)
            # without spectators again: the mean of the runs before and after the watched one
            alone = (alone + play(context, pool, tournament(context, bots, cycles, seed=4)[0])) / 2
        finally:
            if client is not None and client.poll() is None:
                client.kill()
            pool.stop()
            os.killpg(live.pid, signal.SIGTERM)
            live.wait(timeout=30)
    matches = len(ids)
    ratio = (matches / watched) / (matches / alone)
    p50 = statistics.median(delays)
    p99 = delays[min(len(delays) - 1, int(0.99 * len(delays)))]
    per_spectator_kib = (rss_after - rss_before) * 1024 / args.spectators
    print(f"{matches} matches, {args.workers} workers, bots {args.delay_ms} ms per decision, "
          f"{args.spectators} spectators on one live process")
    print(f"without spectators: {alone:.1f} s ({matches / alone:.2f} matches/s); "
          f"with: {watched:.1f} s ({matches / watched:.2f} matches/s); ratio {ratio:.3f} (>= 0.95)")
    print(f"events received: {len(delays)} of {expected}; delay step -> spectator: p50 {p50:.1f} ms, p99 {p99:.1f} ms, "
          f"max {delays[-1]:.1f} ms (p99 < 500 ms)")
    print(f"live process memory: {rss_before:.1f} MiB before, {rss_after:.1f} MiB with the spectators: "
          f"{per_spectator_kib:.1f} KiB per spectator")
    return p99 < 500 and ratio >= 0.95


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--client":
        port, out, *topics = argv[1:]
        asyncio.run(_spectators(int(port), topics, Path(out)))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spectators", type=int, default=1000)
    parser.add_argument("--matches", type=int, default=24)
    parser.add_argument("--delay-ms", type=int, default=20)
    parser.add_argument("--workers", type=int, default=2)
    ok = run(parser.parse_args(argv))
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    tempfile.tempdir = tempfile.gettempdir()
    sys.exit(main())
