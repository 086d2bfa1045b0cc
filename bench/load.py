"""Pages under steady load from a second process (wrk) while a tournament runs.

    python -m bench.load [--duration 60] [--connections 4] [--database-url URL] [--json]

Starts a Redis of its own, the web app under gunicorn (3 processes), 2 match workers, 5 bots and a
long round robin; once matches are being recorded, two wrk processes hammer the leaderboard page and a
bot page for ``--duration`` seconds. Judged by: errors (non-2xx, socket errors) == 0; p99 per page is
recorded. Needs wrk (Debian package ``wrk``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

from arena.composition import build_context
from arena.config import load_settings
from tests.arena import service_harness as h

ROOT = Path(__file__).resolve().parents[1]


def parse_wrk(output: str) -> dict[str, float]:
    """Requests/s, latency percentiles (ms) and error counts from ``wrk --latency`` output."""
    def ms(text: str) -> float:
        value, unit = re.match(r"([\d.]+)(us|ms|s)", text).groups()  # type: ignore[union-attr]
        return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]

    result: dict[str, float] = {"non_2xx": 0, "socket_errors": 0}
    for q in ("50", "90", "99"):
        match = re.search(rf"^\s+{q}%\s+(\S+)", output, re.M)
        if match:
            result[f"p{q}_ms"] = ms(match.group(1))
    match = re.search(r"(\d+) requests in", output)
    result["requests"] = int(match.group(1)) if match else 0
    match = re.search(r"Requests/sec:\s+([\d.]+)", output)
    result["rps"] = float(match.group(1)) if match else 0.0
    match = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    if match:
        result["non_2xx"] = int(match.group(1))
    match = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output)
    if match:
        result["socket_errors"] = sum(int(x) for x in match.groups())
    return result


def run(duration: int, connections: int, database_url: str | None) -> dict:
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is needed: apt-get install wrk")
    workdir = Path(tempfile.mkdtemp(prefix="arena-load-"))
    redis = h.RedisServer(workdir)
    redis.start()
    settings = load_settings({}, env="test", data_dir=workdir, secret_key="load", rate_limits=False,
                             redis_url=redis.url, database_url=database_url or "", match_lease_s=10)
    context = build_context(settings)
    workers = h.Workers(context, workdir)
    port = h.free_port()
    env = {**h.worker_env(context), "ARENA_BIND": f"127.0.0.1:{port}", "WEB_CONCURRENCY": "3"}
    base = f"http://127.0.0.1:{port}"
    log = open(workdir / "web.log", "wb")  # noqa: SIM115 - closed below
    web = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py", "arena.web.wsgi:app"],
                           cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        with h.slow_bots(5, 0.005) as servers:
            bots = h.register_bots(context, servers, "piranha-pedro")
            workers.start(2)
            tournament = h.start_tournament(context, {"game": "piranha-pedro", "bots": bots, "seats": 2,
                                                      "cycles": 50, "seed": 1})
            _wait_until(lambda: h.finished_count(context) >= 10, 120, "no match was recorded")
            _wait_until(lambda: requests.get(base + "/healthz", timeout=2).status_code == 200, 60, "no web app")
            before = h.finished_count(context)
            pages = {"leaderboard": f"{base}/leaderboards/piranha-pedro?players=2", "bot": f"{base}/bots/{bots[0]}"}
            procs = {name: subprocess.Popen(["wrk", "--latency", "-t", "1", "-c", str(connections), "-d",
                                             f"{duration}s", "--timeout", "5s", url], stdout=subprocess.PIPE,
                                            text=True) for name, url in pages.items()}
            results = {name: parse_wrk(proc.communicate(timeout=duration + 60)[0]) for name, proc in procs.items()}
            after = h.finished_count(context)
        with context.db.session(readonly=True) as session:
            from arena.services.tournaments import progress

            done = progress(session, tournament)["done"]
    finally:
        os.killpg(web.pid, signal.SIGTERM)
        web.wait(timeout=30)
        log.close()
        workers.stop()
        redis.stop()
        context.db.dispose()
    return {"duration_s": duration, "connections_per_page": connections, "pages": results,
            "matches_recorded_during_load": after - before, "tournament_done": done,
            "database": "postgresql" if database_url else "sqlite"}


def _wait_until(check, timeout_s: float, message: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except requests.RequestException:
            pass
        time.sleep(0.3)
    raise RuntimeError(message)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=int, default=60)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = run(args.duration, args.connections, args.database_url)
    errors = sum(p["non_2xx"] + p["socket_errors"] for p in result["pages"].values())
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{args.duration} s of load, {args.connections} connections per page, {result['database']}, "
              f"{result['matches_recorded_during_load']} matches recorded meanwhile")
        for name, p in result["pages"].items():
            print(f"  {name:12} {p['requests']:>7} requests {p['rps']:>8.1f}/s  p50 {p.get('p50_ms', 0):7.2f} ms  "
                  f"p90 {p.get('p90_ms', 0):7.2f} ms  p99 {p.get('p99_ms', 0):7.2f} ms  errors "
                  f"{p['non_2xx'] + p['socket_errors']}")
        print(f"errors: {errors} (goal 0) {'PASS' if errors == 0 else 'FAIL'}")
    return 0 if errors == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
