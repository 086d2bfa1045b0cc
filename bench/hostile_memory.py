"""A worker's resident memory across many matches against hostile bots.

    python -m bench.hostile_memory --matches 1000            # starts its own zoo in a child process
    python -m bench.hostile_memory --zoo URL ... --other URL  # play against bots already running

Every match seats one misbehaving bot (rotating through the zoo's fast-failing kinds: garbage, wrong
shape, illegal action, 500, redirect, hang-up, mid-body close, flood, endless bodies) against a random
bot, across every game. Judged by: RSS growth from match 200 to the last match <= 8 MiB.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

from referee.games import GAMES
from referee.protocol import TimeControls
from referee.runner import BotSpec, play_match

GOAL_MIB = 8.0


def rss_mib() -> float:
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def run(zoo: list[str], others: list[str], matches: int) -> dict:
    games = sorted(GAMES)
    samples: list[tuple[int, float]] = []
    faults = 0
    started = time.perf_counter()
    tc = TimeControls(decision_ms=200, start_ms=500, strike_limit=3)
    for i in range(matches):
        game = games[i % len(games)]
        players = GAMES[game].spec.min_players
        seats = [BotSpec(zoo[i % len(zoo)], name="zoo")] + [BotSpec(others[(i + k) % len(others)], name=f"o{k}")
                                                              for k in range(players - 1)]
        replay = play_match(game, seats, seed=i, time_controls=tc)
        faults += len(replay["faults"])
        if (i + 1) % 50 == 0:
            samples.append((i + 1, round(rss_mib(), 2)))
    at_200 = next((rss for n, rss in samples if n >= 200), samples[0][1] if samples else 0.0)
    growth = samples[-1][1] - at_200 if samples else 0.0
    return {"matches": matches, "faults": faults, "seconds": round(time.perf_counter() - started, 1),
            "rss_mib": samples, "growth_mib": round(growth, 2), "goal_mib": GOAL_MIB}


ZOO_SERVER = """
import sys, threading, time
from tests import bot_zoo
from sample_bots.random_bot import make_bot
from sample_bots.sdk import start_in_thread
kinds = [bot_zoo.garbage, bot_zoo.wrong_shape, bot_zoo.illegal, bot_zoo.status(500), bot_zoo.hang_up,
         bot_zoo.status(302, "Location: http://127.0.0.2:9/\\r\\n"), bot_zoo.close_mid_body, bot_zoo.flood,
         bot_zoo.huge_undeclared, bot_zoo.huge_redirect, bot_zoo.wrong_turn]
servers = [bot_zoo.ZooServer(bot_zoo.on_act(k)) for k in kinds]
for s in servers:
    threading.Thread(target=s.serve_forever, daemon=True).start()
others = [start_in_thread(make_bot(i)) for i in range(3)]
print(" ".join(s.url for s in servers), "|", " ".join(o.url for o in others), flush=True)
sys.stdin.read()
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--matches", type=int, default=1000)
    parser.add_argument("--zoo", nargs="*", default=[])
    parser.add_argument("--other", nargs="*", default=[])
    parser.add_argument("--json", action="store_true", help="print only the JSON result")
    args = parser.parse_args(argv)
    zoo_proc = None
    if not args.zoo:
        zoo_proc = subprocess.Popen([sys.executable, "-c", ZOO_SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    text=True)
        zoo_part, _, other_part = zoo_proc.stdout.readline().partition("|")
        args.zoo, args.other = zoo_part.split(), other_part.split()
    try:
        result = run(args.zoo, args.other, args.matches)
    finally:
        if zoo_proc is not None:
            zoo_proc.stdin.close()
            zoo_proc.terminate()
            zoo_proc.wait(timeout=10)
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{result['matches']} hostile matches, {result['faults']} faults recorded, {result['seconds']} s")
        print("RSS (MiB) every 50 matches: " + ", ".join(f"{n}:{r}" for n, r in result["rss_mib"]))
        ok = result["growth_mib"] <= GOAL_MIB
        print(f"growth from match 200 to {result['matches']}: {result['growth_mib']} MiB "
              f"(goal <= {GOAL_MIB} MiB): ratio {result['growth_mib'] / GOAL_MIB:.2f} {'PASS' if ok else 'FAIL'}")
    return 0 if result["growth_mib"] <= GOAL_MIB else 1


if __name__ == "__main__":
    sys.exit(main())
