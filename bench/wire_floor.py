"""Issue 19, goal 5's floor: how near the wire bound any worker could come, on this machine, under this load.

    python -m bench.wire_floor [--games piranha-pedro pajarracos] [--matches 200] [--hogs 0 1 2]

``bench.wire`` judges a worker's matches per minute against the bound set by the wire: decisions per match x
the bare kept-alive round trip + the engine's time. This benchmark runs, in a process of its own as a worker
is, the least a worker must do to play the same matches: it sends the very requests (bodies and headers) the
referee sent to the same stdlib bots (``tests.bot_zoo.polite``) in ``--matches`` matches (each seat's
``/start``, every step's ``/act``s sent together and then read, each seat's ``/end``) on kept-alive
``http.client`` connections, and runs the engine for each match (views, legal actions, apply). Nothing is
built, signed, checked, committed, recorded, queued or shown. The bound is that of the same matches (their
decisions, the engine's time on them, the round trip of their /act bodies). The floor's rate over it is the
most a real worker's ratio can be here: what is between that and 0.5 is all a worker may spend on everything
else (the referee's checks, the record, the queue, the live feed). ``--hogs N`` runs N busy loops beside it,
as goal 5's loaded runs do (each count in the list is a run of its own, the bound measured again in it).
Judged by nothing: it measures the machine, not the arena.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import types
from collections import defaultdict
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bench.busy import busy_loops
from bench.wire import bare_round_trip_ms, engine_ms, engine_replay, replay_steps
from referee.connection_keeper import ConnectionKeeper
from referee.games import GAMES, get_game
from referee.runner import BotSpec, play_match
from tests import bot_zoo

_PHASE = {"/start": -1, "/end": 1 << 30}  # /start before every turn, /end after
ROOT = Path(__file__).resolve().parent.parent  # where ``-m bench.wire_floor`` imports from


def traffic(game_name: str, servers: list[bot_zoo.ZooServer], matches: int) -> dict[str, Any]:
    """Play ``matches`` matches and return what they were made of: per match, its seed, params and actions,
    and its requests (bot, path, body, headers) in the order the floor sends them (groups sent together: a
    phase's calls to every seat)."""
    for server in servers:
        server.requests.clear()
    urls = [s.url for s in servers]
    with ConnectionKeeper() as keeper:
        replays = [play_match(game_name, [BotSpec(u) for u in urls], seed=seed, keeper=keeper)
                   for seed in range(matches)]
    groups: dict[tuple[str, int], list[tuple[int, str, str, dict[str, str]]]] = defaultdict(list)
    for index, server in enumerate(servers):
        for request in list(server.requests):
            if request.path not in ("/start", "/act", "/end"):
                continue
            body = json.loads(request.body)
            groups[body["match_id"], _PHASE.get(request.path, body.get("turn", 0))].append(
                (index, request.path, request.body.decode(), request.headers))
    plan = []
    for replay in replays:
        phases = sorted(turn for match_id, turn in groups if match_id == replay["match_id"])
        plan.append({"seed": replay["seed"], "params": replay["params"],
                     "steps": replay_steps(replay),
                     "groups": [groups[replay["match_id"], turn] for turn in phases]})
    return {"game": game_name, "urls": urls, "matches": plan}


def floor_child(path: str, repeat: int) -> None:
    """The floor worker (a process of its own): plays the plan ``repeat`` times after one warm-up match,
    prints its wall and CPU a match as JSON."""
    with open(path) as f:
        plan = json.load(f)
    game = get_game(plan["game"])
    seats = len(plan["urls"])
    conns = [http.client.HTTPConnection(urlsplit(u).hostname or "", urlsplit(u).port) for u in plan["urls"]]
    for match in plan["matches"]:
        match["steps"] = [{int(seat): action for seat, action in step.items()} for step in match["steps"]]
        match["groups"] = [[(i, p, b.encode(), list(h.items())) for i, p, b, h in group] for group in match["groups"]]

    def one(match: dict[str, Any]) -> None:
        for group in match["groups"]:
            for index, path, body, headers in group:  # the referee's headers (its Host and Content-Length too)
                conn = conns[index]
                conn.putrequest("POST", path, skip_host=True, skip_accept_encoding=True)
                for name, value in headers:
                    conn.putheader(name, value)
                conn.endheaders(body)
            for index, _path, _body, _headers in group:
                conns[index].getresponse().read()
        engine_replay(game, seats, match["seed"], match["params"], match["steps"])

    try:
        one(plan["matches"][0])
        wall, cpu = time.perf_counter(), time.process_time()
        for _ in range(repeat):
            for match in plan["matches"]:
                one(match)
        played = repeat * len(plan["matches"])
        print(json.dumps({"wall_ms": (time.perf_counter() - wall) * 1000 / played,
                          "cpu_ms": (time.process_time() - cpu) * 1000 / played}))
    finally:
        for conn in conns:
            conn.close()


def run(args: argparse.Namespace) -> None:
    for game_name in args.games:
        seats = GAMES[game_name].spec.min_players
        servers = [bot_zoo.ZooServer(bot_zoo.polite) for _ in range(seats)]
        for server in servers:
            server.bot = types.SimpleNamespace(secret=None)
            threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            for hogs in args.hogs:
                with busy_loops(hogs):
                    _measure(game_name, servers, seats, hogs, args)
        finally:
            for server in servers:
                server.shutdown()
                server.server_close()


def _measure(game_name: str, servers: list[bot_zoo.ZooServer], seats: int, hogs: int, args: argparse.Namespace) -> None:
    plan = traffic(game_name, servers, args.matches)
    game = get_game(game_name)
    decisions = statistics.mean(sum(len(step) for step in m["steps"]) for m in plan["matches"])  # (the floor's own
    calls = statistics.mean(sum(len(g) for g in m["groups"]) for m in plan["matches"])  # matches make its bound)
    engine = engine_ms(game, seats, [(m["seed"], m["params"], m["steps"]) for m in plan["matches"]])
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(plan, f)
    try:
        before = bare_round_trip_ms(servers, seats)
        child = [sys.executable, "-m", "bench.wire_floor", "--child", f.name, "--repeat", str(args.repeat)]
        out = subprocess.run(child, capture_output=True, text=True, check=True, cwd=ROOT)
        after = bare_round_trip_ms(servers, seats)
    finally:
        os.unlink(f.name)
    floor = json.loads(out.stdout)
    bound = decisions * (before + after) / 2 + engine
    allowed = 2 * bound  # goal 5: a worker's rate >= half the bound's
    print(f"{game_name}, {hogs} busy loop(s): {decisions:.1f} decisions, {calls:.1f} calls a match; round trip "
          f"{before:.3f} ms before, {after:.3f} after; engine {engine:.2f} ms: bound {bound:.2f} ms a match, so goal 5 "
          f"allows a worker {allowed:.2f} ms a match", flush=True)
    print(f"  the floor worker: {floor['wall_ms']:.2f} ms a match (its CPU {floor['cpu_ms']:.2f}): "
          f"{bound / floor['wall_ms']:.2f} of the bound; left for everything else a worker does: "
          f"{allowed - floor['wall_ms']:.2f} ms a match", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", nargs="+", default=sorted(GAMES))
    parser.add_argument("--matches", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3, help="times the floor worker plays the matches")
    parser.add_argument("--hogs", type=int, nargs="+", default=[0], help="busy loops beside each run")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        floor_child(args.child, args.repeat)
    else:
        run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
