"""Engine cost per decision in random self-play, against one loopback HTTP round trip.

    python -m bench.engine [--seconds S] [--games NAME ...]

Judged by: engine microseconds per decision / median requests round trip <= 0.10, for every game and
player count. A decision is one seat's choice: the engine work the referee does for it is to_act,
decision, legal_actions, view and that seat's share of apply.
"""

from __future__ import annotations

import argparse
import random
import sys
import time

from bench.loopback import round_trip_us, trivial_server
from referee.games import GAMES

GOAL = 0.10


def measure(name: str, players: int, seconds: float) -> dict[str, float]:
    game = GAMES[name]
    decisions = matches = 0
    seed = 0
    elapsed = 0.0
    while elapsed < seconds:
        rng = random.Random(seed)
        t0 = time.perf_counter()
        state = game.initial_state(players, seed)
        while not game.is_terminal(state):
            actions = {}
            for seat in game.to_act(state):
                game.decision(state, seat)
                game.view(state, seat)
                actions[seat] = rng.choice(game.legal_actions(state, seat))
            decisions += len(actions)
            state = game.apply(state, actions)
        game.result(state)
        elapsed += time.perf_counter() - t0
        matches += 1
        seed += 1
    return {"us_per_decision": elapsed / decisions * 1e6, "games_per_s": matches / elapsed,
            "decisions_per_game": decisions / matches}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=1.0, help="time per game and player count")
    parser.add_argument("--games", nargs="*", default=sorted(GAMES))
    args = parser.parse_args(argv)
    with trivial_server() as url:
        rtt = round_trip_us(url)
    print(f"loopback requests round trip: median {rtt['median']:.0f} us, p90 {rtt['p90']:.0f} us")
    print(f"{'game':28} {'n':>2} {'games/s':>9} {'dec/game':>9} {'us/decision':>12} {'ratio':>7}")
    worst = 0.0
    for name in args.games:
        spec = GAMES[name].spec
        for players in range(spec.min_players, spec.max_players + 1):
            m = measure(name, players, args.seconds)
            ratio = m["us_per_decision"] / rtt["median"]
            worst = max(worst, ratio)
            print(f"{name:28} {players:>2} {m['games_per_s']:>9.0f} {m['decisions_per_game']:>9.1f} "
                  f"{m['us_per_decision']:>12.1f} {ratio:>7.3f}")
    verdict = "PASS" if worst <= GOAL else "FAIL"
    print(f"worst ratio engine/round trip = {worst:.3f} (goal <= {GOAL:.2f}): {verdict}")
    return 0 if worst <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
