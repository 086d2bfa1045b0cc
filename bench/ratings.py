"""Arena Elo cost: one fit plus bootstrap refits over a large log, against a one-second goal.

    python -m bench.ratings [--matches M] [--bots N] [--seats K] [--resamples B] [--repeat R]

Judged by: seconds for ``leaderboard`` (fit + B bootstrap refits, intervals, rank ranges, LOS) over M
K-player matches of N bots, divided by the 1.0 s goal, must be <= 1. Defaults: 10,000 four-player matches of
50 bots, 200 resamples. The log is simulated by a Plackett-Luce race (Bradley-Terry pairwise) with seeded
strengths; building it is not timed. Every run is shown and the slowest of ``--repeat`` runs is judged (the
first run pays numpy's warm-up).
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time

from arena.ratings import MatchOutcome, leaderboard

GOAL_SECONDS = 1.0


def simulated_log(matches: int, bots: int, seats: int, seed: int) -> list[MatchOutcome]:
    """A seeded log: strengths ~ N(0, 200 Elo), each match a Plackett-Luce race among random seats."""
    rng = random.Random(seed)
    strength = [math.exp(rng.gauss(0.0, 200.0 * math.log(10) / 400)) for _ in range(bots)]
    log = []
    for _ in range(matches):
        table = rng.sample(range(bots), seats)
        finish = sorted(table, key=lambda bot: rng.expovariate(strength[bot]))
        ranks = tuple(finish.index(bot) + 1 for bot in table)
        log.append(MatchOutcome(tuple(f"bot{bot:02d}" for bot in table), ranks, "ranked"))
    return log


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--matches", type=int, default=10_000)
    parser.add_argument("--bots", type=int, default=50)
    parser.add_argument("--seats", type=int, default=4)
    parser.add_argument("--resamples", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    log = simulated_log(args.matches, args.bots, args.seats, seed=1)
    times = []
    for run in range(args.repeat):
        t0 = time.perf_counter()
        table = leaderboard(log, rng=random.Random(run), resamples=args.resamples)
        times.append(time.perf_counter() - t0)
    slowest = max(times)
    widths = [row.elo_high - row.elo_low for row in table]
    print(f"{args.matches} matches, {args.bots} bots, {args.seats} seats, fit + {args.resamples} bootstrap refits")
    print("runs: " + ", ".join(f"{t:.3f} s" for t in times))
    print(f"top: {table[0].bot} {table[0].elo:.1f} [{table[0].elo_low:.1f}, {table[0].elo_high:.1f}]; "
          f"median 95% interval width {sorted(widths)[len(widths) // 2]:.1f} Elo")
    ratio = slowest / GOAL_SECONDS
    verdict = "PASS" if ratio <= 1.0 else "FAIL"
    print(f"slowest {slowest:.3f} s / goal {GOAL_SECONDS:.1f} s = ratio {ratio:.3f} (goal <= 1): {verdict}")
    return 0 if ratio <= 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
