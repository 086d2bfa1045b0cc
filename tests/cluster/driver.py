"""The cluster test's driver, run inside the ``drv`` namespace (``ip netns exec <prefix>drv python -m
tests.cluster.driver ...``): it can reach the cluster's hosts and nothing else. It starts every host's
processes, plays the scenarios one after the other (a fresh tournament each, the ladder running with a
newcomer submitted by a user), lets the paused ladders drain and checks the invariants after each,
measures throughput, and writes a JSON report; the pytest side builds and removes the network around it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from arena.composition import build_context
from arena.config import load_settings
from arena.services import bots as bot_service
from arena.services.accounts import create_account
from tests.cluster import ladder
from tests.cluster.hosts import BOT_PORTS, FAST_BOT_PORTS, Hosts
from tests.cluster.invariants import check_all
from tests.cluster.scenarios import GAME, SCENARIOS, WORKER_HOSTS, Run, throughput
from tests.cluster.topology import Cluster


def inside(cluster: Cluster, host: str) -> bool:
    """True when this process's network namespace is the host's (so nothing else is reachable)."""
    mine = os.stat("/proc/self/ns/net")
    theirs = os.stat(f"/var/run/netns/{cluster.ns(host)}")
    return (mine.st_dev, mine.st_ino) == (theirs.st_dev, theirs.st_ino)


def start(cluster: Cluster, run_dir: Path, workers_per_host: int) -> Run:
    hosts = Hosts(cluster, run_dir)
    hosts.start_db()
    context = build_context(load_settings(hosts.env), migrate=True)
    hosts.start_bots()
    hosts.start_web()
    for host in WORKER_HOSTS:
        hosts.start_workers(host, workers_per_host)
    hosts.start_ladder("w1")  # first, so the active scheduler is w1's when scenario 1 cuts it off
    hosts.wait_bots()
    with context.db.session() as session:
        # the arena's own bots (an organizer's): they may share ladder tables, which one user's bots may not
        owner, _token = create_account(session, "owner", admin=True)
        registered = [bot_service.register_bot(session, owner, f"bot-{port}", hosts.bot_url(port), GAME,
                                               context.settings, context.health_check,
                                               knows_secret=True)  # handed to the bots just below
                      for port in BOT_PORTS + FAST_BOT_PORTS]
        ids = [bot.id for bot, _secret in registered]
    hosts.give_secrets({port: secret for port, (_bot, secret) in zip(BOT_PORTS + FAST_BOT_PORTS, registered,
                                                                      strict=True)})
    hosts.wait_web()
    run = Run(cluster, hosts, context, ids[:len(BOT_PORTS)], ids[len(BOT_PORTS):], workers_per_host)
    ladder.wait_holder(run, ("w1",), 90)
    for host in WORKER_HOSTS[1:]:
        hosts.start_ladder(host)
    run.wait_workers(WORKER_HOSTS)
    return run


def heal_everything(run: Run) -> None:
    for host in ("db", "web", *WORKER_HOSTS, "bots"):
        run.cluster.heal(host)
    run.cluster.heal_pair("web", "db")


def play(run: Run, names: list[str]) -> list[dict[str, Any]]:
    results = []
    for name in names:
        started = time.monotonic()
        entry: dict[str, Any] = {"scenario": name}
        since = ladder.last_match_id(run)
        try:
            ladder.set_running(run, True)
            entry["newcomer"] = ladder.newcomer(run)
            entry["facts"] = SCENARIOS[name](run)
        except Exception as exc:
            entry["error"] = f"{type(exc).__name__}: {exc}"[:3000]
            entry["traceback"] = traceback.format_exc()[-3000:]
            heal_everything(run)
        try:  # the ladders paused, what they owe played: the invariants then speak of a quiet database
            entry["ladder_drained_in_s"] = round(ladder.drain(run), 1)
        except Exception as exc:
            entry.setdefault("error", f"{type(exc).__name__}: {exc}"[:3000])
        entry["ladder_matches"] = ladder.ladder_matches(run, since)
        try:
            entry["invariants"] = check_all(run.context.db, run.hosts.bot_log, run.tournaments)
        except Exception as exc:
            entry["invariants"] = [f"could not check: {type(exc).__name__}: {exc}"]
        entry["seconds"] = round(time.monotonic() - started, 1)
        entry["passed"] = "error" not in entry and not entry["invariants"]
        if not entry["passed"]:
            entry["logs"] = run.hosts.logs("w*.log", 1500)[-12000:] + run.hosts.logs("web*.log", 1500)[-4000:]
        print(json.dumps({k: v for k, v in entry.items() if k not in ("logs", "traceback")}), flush=True)
        results.append(entry)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--run-dir", required=True, type=Path)
    parser.add_argument("--report", required=True, type=Path)
    parser.add_argument("--scenarios", nargs="*", default=list(SCENARIOS))
    parser.add_argument("--throughput", action="store_true")
    parser.add_argument("--workers-per-host", type=int, default=1)
    args = parser.parse_args()
    cluster = Cluster(prefix=args.prefix)
    if not inside(cluster, "drv"):
        print("refusing to run outside the drv namespace", file=sys.stderr)
        return 2
    report: dict[str, Any] = {"scenarios": [], "started": time.time()}
    run = None
    try:
        begun = time.monotonic()
        run = start(cluster, args.run_dir, args.workers_per_host)
        report["start_seconds"] = round(time.monotonic() - begun, 1)
        report["scenarios"] = play(run, args.scenarios)
        if args.throughput:
            begun = time.monotonic()
            report["throughput"] = throughput(run)
            report["throughput"]["seconds"] = round(time.monotonic() - begun, 1)
            print(json.dumps(report["throughput"]), flush=True)
    except Exception:
        report["error"] = traceback.format_exc()[-4000:]
        if run is not None:
            report["logs"] = run.hosts.logs(tail=1500)[-15000:]
    finally:
        if run is not None:
            run.hosts.stop_all()
        args.report.write_text(json.dumps(report, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
