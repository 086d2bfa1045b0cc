"""Issue 19, goal 5: a worker's matches per minute against instant bots, judged against the wire.

    python -m bench.wire [--games ...] [--workers 1 2 4] [--cycles 3] [--postgres URL] [--hogs N]

The bots are stdlib servers answering the first legal action (``tests.bot_zoo.polite``). Per game, the
bound set by the wire is decisions per match x the median bare kept-alive ``http.client`` round trip of
the /act bodies the bots were sent + the engine's own time for the same matches (views, legal actions,
apply), all measured here. The round trip is measured again right after each worker count's run, and
that run is judged against the mean of the round trips just before and just after it: on this shared
2-core machine the round trip moved threefold between runs minutes apart (docs/benchmarks.md, the fifth
session's rerun), so a bound measured once judged later runs against another machine. Judged by: one
worker's matches per minute / that bound >= 0.5, per game; the rates of the other worker counts are
printed per worker. A rate is the steady one, between the matches'
own finishing times (``bench.throughput.steady_per_match``: a run's fixed tail, the last refit's 2 s
wait above all, left out); the end-to-end rate is printed beside it, and the CPU a match of the workers
(from /proc) and of this process (the bots' threads, and the harness waiting on the database): how much
of a worker's time is its own work, and how much the bots'. The same matches played by
``play_match`` in this process, nothing queued or stored (connections kept from match to match, as in a
worker's batch), are printed as the ceiling a worker cannot pass. ``bench.wire_floor`` sends the same
traffic from a process of its own with nothing else done: the most any worker's ratio can be under the
load of the moment. ``--hogs N`` runs N busy loops beside the whole run (the bound's measures included).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
import types
from typing import Any

from bench.busy import busy_loops
from bench.referee import bare_round_trips
from bench.throughput import arena, queue_rate
from referee.connection_keeper import ConnectionKeeper
from referee.games import GAMES, get_game
from referee.games.base import Game
from referee.runner import BotSpec, play_match
from tests import bot_zoo
from tests.arena import service_harness as h

BOTS = 4


def wire_bound_ms(game_name: str, servers: list[bot_zoo.ZooServer], seats: int, matches: int = 20) -> tuple[
        float, float, float, float, float]:
    """(bound per match, decisions per match, bare round trip, engine per match, ``play_match`` per match in
    this process), all in ms. The last is a worker's ceiling: the match alone, nothing queued or stored.
    ``bare_round_trip_ms`` measures the round trip again on the same bodies."""
    game = get_game(game_name)
    urls = [s.url for s in servers[:seats]]
    started = time.perf_counter()
    with ConnectionKeeper() as keeper:  # as a worker's batch plays them
        replays = [play_match(game_name, [BotSpec(u) for u in urls], seed=seed, keeper=keeper)
                   for seed in range(matches)]
    play_ms = (time.perf_counter() - started) * 1000 / matches
    decisions = statistics.mean(sum(len(s["decisions"]) for s in r["steps"]) for r in replays)
    round_trip = bare_round_trip_ms(servers, seats)
    engine = engine_ms(game, seats, [(r["seed"], r["params"], replay_steps(r)) for r in replays])
    return decisions * round_trip + engine, decisions, round_trip, engine, play_ms


def replay_steps(replay: dict[str, Any]) -> list[dict[int, Any]]:
    """A replay's actions, step by step: each acting seat's."""
    return [{d["seat"]: d["action"] for d in step["decisions"]} for step in replay["steps"]]


def engine_ms(game: Game, seats: int, matches: list[tuple[int, dict[str, Any], list[dict[int, Any]]]]) -> float:
    """The engine's time a match (``engine_replay``) over ``matches`` (each its seed, params and steps), in ms."""
    started = time.perf_counter()
    for seed, params, steps in matches:
        engine_replay(game, seats, seed, params, steps)
    return (time.perf_counter() - started) * 1000 / len(matches)


def engine_replay(game: Game, seats: int, seed: int, params: dict[str, Any], steps: list[dict[int, Any]]) -> None:
    """The engine's own work for a played match: each acting seat's view and legal actions, each step applied
    (what the bound counts as engine time)."""
    state = game.initial_state(seats, seed, params)
    for actions in steps:
        for seat in actions:
            game.view(state, seat)
            game.legal_actions(state, seat)
        state = game.apply(state, actions)


def bare_round_trip_ms(servers: list[bot_zoo.ZooServer], seats: int) -> float:
    """The median bare kept-alive round trip of the latest 600 /act bodies the bots were sent."""
    bodies = [(s.url, r.body) for s in servers[:seats] for r in s.requests if r.path == "/act"]
    return bare_round_trips(bodies[-600:], repeat=1)


def run(args: argparse.Namespace) -> bool:
    ok = True
    for game_name in args.games:
        seats = GAMES[game_name].spec.min_players
        with arena(args.postgres) as (context, workdir):
            servers = [bot_zoo.ZooServer(bot_zoo.polite) for _ in range(BOTS)]
            for server in servers:
                server.bot = types.SimpleNamespace(secret=None)  # what the harness hands the secret to
                threading.Thread(target=server.serve_forever, daemon=True).start()
            try:
                bots = h.register_bots(context, servers, game_name, owner=f"owner-{game_name}")
                bound, decisions, round_trip, engine, play = wire_bound_ms(game_name, servers, seats)
                bound_rate = 60000 / bound
                print(f"{game_name}: {decisions:.1f} decisions/match x {round_trip:.3f} ms + engine {engine:.2f} ms "
                      f"= {bound:.2f} ms/match: wire bound {bound_rate:.0f} matches/minute per worker", flush=True)
                print(f"  play_match alone, in this process: {play:.2f} ms/match, {bound / play:.2f} of the bound "
                      f"(a worker's ceiling: nothing queued or stored)", flush=True)
                before = round_trip
                for workers in args.workers:
                    steady: list[float] = []
                    cpu: list[float] = []
                    finished, bots_cpu = h.finished_count(context), time.process_time()
                    per_match = queue_rate(context, workdir, bots, 0, workers, game=game_name, seats=seats,
                                           cycles=args.cycles, steady=steady, cpu=cpu)
                    bots_cpu = (time.process_time() - bots_cpu) / max(h.finished_count(context) - finished, 1)
                    after = bare_round_trip_ms(servers, seats)
                    run_bound = decisions * (before + after) / 2 + engine
                    rate = 60 / steady[0]
                    ratio = rate / workers / (60000 / run_bound)
                    unrefitted = 60 / steady[1] / workers / (60000 / run_bound)
                    line = (f"  {workers} worker(s): {rate:7.0f} matches/minute, {rate / workers:6.0f} per worker: "
                            f"{ratio:.2f} of the bound (round trip {before:.3f} ms before the run, {after:.3f} after: "
                            f"bound {60000 / run_bound:.0f} a minute; the leaderboard refits the workers ran meanwhile "
                            f"took {1 - steady[1] / steady[0]:.0%} of the time, without them {unrefitted:.2f}; from "
                            f"the tournament's creation to its last refit: {60 / per_match:.0f} a minute)")
                    before = after
                    if workers == 1:
                        ok &= ratio >= 0.5
                        line += f" (goal >= 0.5) {'PASS' if ratio >= 0.5 else 'FAIL'}"
                    print(line, flush=True)
                    busy = workers * steady[0]  # each worker's wall a match it plays
                    print(f"    CPU a match, the whole run: the workers' {cpu[0] * 1000:.2f} ms (a worker plays a "
                          f"match in {busy * 1000:.2f} ms: {cpu[0] / busy:.0%}), this process's (the bots', and the "
                          f"harness's waiting) {bots_cpu * 1000:.2f} ms", flush=True)
            finally:
                for server in servers:
                    server.shutdown()
                    server.server_close()
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", nargs="+", default=sorted(GAMES))
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--cycles", type=int, default=3)
    parser.add_argument("--postgres", default=None, help="a PostgreSQL URL (default: a SQLite file)")
    parser.add_argument("--hogs", type=int, default=0, help="busy loops beside the whole run")
    args = parser.parse_args(argv)
    with busy_loops(args.hogs):
        return 0 if run(args) else 1


if __name__ == "__main__":
    sys.exit(main())
