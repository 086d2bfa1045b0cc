"""Slow clients (slowloris) against the production web shape: gunicorn with deploy/gunicorn.conf.py and the
compose file's environment alone, then behind nginx with deploy/nginx.conf.template (issue 15).

    python -m bench.slow_clients [--header 200] [--body 50] [--duration 5] [--json]

For each shape, wrk asks /healthz and the home page for ``--duration`` seconds (2 connections each, 2 s
timeout) with no attack, then again while ``--header`` slow-header connections (a header line every 2 s)
and ``--body`` slow-body connections (a byte every 2 s) are open from addresses of their own
(127.0.1.x, 127.0.2.x). On gunicorn alone, slow-header connections are added until each process holds
one per thread, as an attacker that keeps opening would. Judged by: behind nginx under attack, no
errors and p99 under 1 s. Needs PostgreSQL (ARENA_TEST_DATABASE_URL), wrk and nginx.
"""

from __future__ import annotations

import argparse
import json
import runpy
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.load import parse_wrk
from tests.deploy import proxy_harness as h

HEADER_SOURCES = [f"127.0.1.{i}" for i in range(1, 11)]
BODY_SOURCES = [f"127.0.2.{i}" for i in range(1, 6)]


def wrk_pages(port: int, duration: int) -> dict[str, dict[str, float]]:
    urls = {"healthz": f"http://127.0.0.1:{port}/healthz", "home": f"http://127.0.0.1:{port}/"}
    procs = {name: subprocess.Popen(["wrk", "--latency", "-t", "1", "-c", "2", "-d", f"{duration}s", "--timeout",
                                     "2s", url], stdout=subprocess.PIPE, text=True) for name, url in urls.items()}
    return {name: parse_wrk(proc.communicate(timeout=duration + 60)[0]) for name, proc in procs.items()}


def attack(port: int, header: int, body: int, web: h.Web | None, duration: int) -> dict:
    """wrk's figures while the slow clients are open; ``web`` given: top up until every process is held."""
    slow = h.SlowClients(port)
    try:
        slow.open("header", header, HEADER_SOURCES)
        slow.open("body", body, BODY_SOURCES)
        if web is not None:
            threads = runpy.run_path(str(h.ROOT / "deploy" / "gunicorn.conf.py"))["threads"]
            while min(web.connections_per_worker().values()) < threads and len(slow.socks) < header + body + 1500:
                slow.open("header", 20, HEADER_SOURCES)
        opened = {"header": slow.open_count("header"), "body": slow.open_count("body")}
        time.sleep(1)
        status, seconds, _ = h.get(port, "/healthz", timeout=10)
        pages = wrk_pages(port, duration)
        still_open = {"header": slow.open_count("header"), "body": slow.open_count("body")}
    finally:
        slow.close()
    return {"opened": opened, "still_open_at_end": still_open, "pages": pages,
            "one_healthz": {"status": status, "seconds": round(seconds, 3)}}


def run(header: int, body: int, duration: int) -> dict:
    for tool in ("wrk", "nginx"):
        if shutil.which(tool) is None and not Path(f"/usr/sbin/{tool}").exists():
            raise SystemExit(f"{tool} is needed: apt-get install {tool if tool == 'wrk' else 'nginx-light'}")
    workdir = Path(tempfile.mkdtemp(prefix="arena-slow-clients-"))
    result: dict = {"header": header, "body": body, "duration_s": duration}
    with h.gunicorn(workdir / "web") as web:
        result["gunicorn alone"] = {"quiet": wrk_pages(web.port, duration),
                                    "attack": attack(web.port, header, body, web, duration)}
        time.sleep(1)
        with h.nginx(workdir / "nginx", f"127.0.0.1:{web.port}") as port:
            result["behind nginx"] = {"quiet": wrk_pages(port, duration),
                                      "attack": attack(port, header, body, None, duration)}
    shutil.rmtree(workdir, ignore_errors=True)
    return result


def _line(name: str, p: dict[str, float], duration: int) -> str:
    if not p["requests"]:  # wrk counts no timeout then: each connection waited the whole run
        return f"    {name:8}      0 answered in {duration} s"
    return (f"    {name:8} {p['requests']:>6} answered  p50 {p.get('p50_ms', 0):7.2f} ms  p99 {p.get('p99_ms', 0):7.2f}"
            f" ms  errors {p['non_2xx'] + p['socket_errors']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--header", type=int, default=200, help="slow-header connections")
    parser.add_argument("--body", type=int, default=50, help="slow-body connections")
    parser.add_argument("--duration", type=int, default=5, help="seconds of wrk per phase (under 10: nginx "
                                                                "drops slow headers after 10 s)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = run(args.header, args.body, args.duration)
    behind = result["behind nginx"]["attack"]["pages"]
    ok = all(p["requests"] and p["non_2xx"] + p["socket_errors"] == 0 and p.get("p99_ms", 1e9) < 1000
             for p in behind.values())
    if args.json:
        print(json.dumps(result))
    else:
        for shape in ("gunicorn alone", "behind nginx"):
            print(f"{shape}:")
            print("  no attack")
            for name, p in result[shape]["quiet"].items():
                print(_line(name, p, args.duration))
            attacked = result[shape]["attack"]
            one = attacked["one_healthz"]
            print(f"  {attacked['opened']['header']} slow-header and {attacked['opened']['body']} slow-body "
                  f"connections open ({attacked['still_open_at_end']} at the end); one /healthz: "
                  + (f"{one['status']} in {one['seconds'] * 1000:.1f} ms" if one["status"] else "no answer in 10 s"))
            for name, p in attacked["pages"].items():
                print(_line(name, p, args.duration))
        print(f"behind nginx under attack: no errors, p99 < 1 s: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
