"""The ladder's benchmarks (issue 17).

    python -m bench.ladder sim [--quick] [--seeds S]   the planner in simulation (benchmarks 1-3)
    python -m bench.ladder e2e [...]                   end to end on the embedded default (bench/ladder_e2e.py)
    python -m bench.ladder oracle [...]                benchmark 1's ceiling: schedulers that know every strength
                                                       (bench/ladder_oracle.py; context, not judged)

``sim`` runs the real planner (``arena.domain.ladder_planner``) against the real rating fit
(``arena.ratings.leaderboard.packed_leaderboard`` on a ``from_ids`` log, seeded as ``services.leaderboards.refit``
seeds it) on bots of known strength (strengths ~ N(0, 200 Elo); every match a Plackett-Luce race). A table
is played as the runtime plays it: all k rotations on one deal, the deal giving each seat a luck of
N(0, 50 Elo) that every rotation shares, so seat luck cancels over a table. Time goes in rounds: each round
the scheduler is asked for up to ``SLOTS`` tables (every bot one free slot), they are played, and the fit
is refreshed once at least ``REFIT_EVERY`` matches have finished since the last refit: the coalescing of
the real refit (one refit for a batch of finished matches), so the planner decides on a fit that can be
a round old. ``recent`` is the pairs' meetings over the last ``RECENT_TABLES`` tables.

Judged (each ratio measured in one run, medians over seeds; the machine may be shared, only match counts
are judged, never time):

1. matches until the leaderboard's Kendall tau with the truth first reaches 0.9, 50 bots, 3 and 4 players:
   planner / uniformly random tables <= 0.6;
2. a new bot entering a settled 30-bot ladder: matches until its 95 % rank range is at most 5 ranks wide and
   holds its true rank: planner / uniformly random tables <= 0.5 (also shown: random tables that always
   seat the new bot, a stricter baseline);
3. load and fair share: bots with capacities 1-3 and matches of random duration, three games sharing one
   budget of tables in flight through ``share_slots``: no bot ever over its capacity, and matches per game
   within 10 % of each other.
"""

from __future__ import annotations

import argparse
import sys

from bench import ladder_sim


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    sim = commands.add_parser("sim", help="benchmarks 1-3 in simulation")
    sim.add_argument("--quick", action="store_true", help="fewer seeds and a smaller board: a smoke run")
    sim.add_argument("--seeds", type=int, default=None, help="seeds per setting (default 5, quick 1)")
    sim.add_argument("--only", choices=("1", "2", "3", "bound"), action="append",
                     help="run only these benchmarks (bound: benchmark 1's idealised oracle bound alone)")
    commands.add_parser("e2e", help="benchmark 4, end to end (bench/ladder_e2e.py)", add_help=False)
    commands.add_parser("oracle", help="schedulers that know every strength (bench/ladder_oracle.py)",
                        add_help=False)
    args, rest = parser.parse_known_args(argv)
    if args.command == "e2e":
        from bench import ladder_e2e  # written with the ladder runtime; the simulation works without it

        sys.argv = [f"{sys.argv[0]} e2e", *rest]  # its own options, as if it had been run by itself
        return ladder_e2e.main()
    if args.command == "oracle":
        from bench import ladder_oracle

        return ladder_oracle.main(rest)
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    return ladder_sim.run(quick=args.quick, seeds=args.seeds, only=set(args.only or ("1", "2", "3")))


if __name__ == "__main__":
    sys.exit(main())
