"""Benchmark 1's ceiling: schedulers that know every true strength (context for issue 17, not judged).

    python -m bench.ladder oracle [--players 3 4] [--widths 0,100,inf,1sd,wrong] [--focus 0,1] [--long 0,0.2]
                                  [--need expected|actual] [--seeds 12] [--streams 1] [--limit 4000] [--planner]
                                  [--no-random]

Same simulation as benchmark 1 (``bench.ladder_sim.matches_to_tau``: 50 bots, rounds of ``SLOTS`` tables,
every table played in all its rotations on one deal, the real fit refreshed every round, Kendall tau 0.9
checked after each refit); only the scheduler changes. Each round it seats ``SLOTS`` tables, one at a time,
among the bots still free this round:

* the anchor is drawn with probability ~ ``need ** focus``; ``need`` is the bot's expected number of
  misordered pairs, sum over j of Phi(-|t_i - t_j| / s_ij), from the *true* gaps t and the fit's current
  pair sd s_ij (dense middle and wide intervals need most; ``focus`` 0 is a uniform draw);
* each opponent, with probability ``long``, is any free bot (a long-range link); otherwise it is drawn with
  probability ~ exp(-(d / w)^2), d the true Elo distance to the anchor. ``w`` is a width in Elo, ``inf``
  (uniform: random tables), ``0`` (the nearest free bot: true neighbours), or ``Nsd``: N times the pair's
  current fitted sd (wide, nearly random tables while the fit is vague, narrowing as it sharpens: what the
  planner's Thompson draw does, with the truth in place of the draw); or ``wrong``: a free bot the fit
  has in the wrong order against the anchor (the nearest free bot if none).

``--need actual`` replaces the expected count by the actual count of the bot's pairs the fit has in the
wrong order: knowledge of the fit's own errors, which no real scheduler has (an upper reference).

Every design is run on the seeds of benchmark 1 (1..S), next to uniformly random tables on the same seeds;
a design's ratio is its median matches over random's. A run that never reaches tau 0.9 counts ``limit``.
"""

from __future__ import annotations

import argparse
import math
import random
from collections.abc import Sequence

import numpy as np

from arena.domain.ladder_planner import Table
from bench.ladder_sim import SLOTS, Z95, Board, Scheduler, matches_to_tau, median, planner, random_tables

BOTS, GOAL = 50, 0.9  # benchmark 1's board and goal


def pair_sd(board: Board) -> np.ndarray:
    """Every pair's fitted sd in Elo (the prior's for a bot the fit has not seen), n x n."""
    wide = board.entrants()
    sd = np.array([(e.elo_high - e.elo_low) / (2 * Z95) for e in wide])
    return np.maximum(np.sqrt(sd[:, None] ** 2 + sd[None, :] ** 2), 1.0)


def oracle(width: str, focus: float, long: float, actual: bool = False) -> Scheduler:
    """A scheduler that knows the true strengths (module docstring); ``width`` as on the command line;
    ``actual``: anchors by the fit's actual errors instead of the expected ones."""
    relative = width.endswith("sd")
    w = 0.0 if width == "wrong" else float(width[:-2] if relative else width)

    def schedule(board: Board, players: int, slots: int, rng: random.Random) -> list[Table]:
        truth = np.array(board.truth)
        gap = np.abs(truth[:, None] - truth[None, :])
        spread = pair_sd(board)
        need = 0.5 * np.vectorize(math.erfc, otypes=[float])(gap / spread / math.sqrt(2.0))
        np.fill_diagonal(need, 0.0)
        need = need.sum(axis=1)
        fitted = np.array([board.estimate(b) for b in range(len(truth))])
        wrong = np.sign(fitted[:, None] - fitted[None, :]) != np.sign(truth[:, None] - truth[None, :])
        np.fill_diagonal(wrong, False)
        if actual:
            need = wrong.sum(axis=1).astype(float)
        scale = w * spread if relative else np.full_like(gap, w)
        free = np.ones(len(truth), dtype=bool)
        tables = []
        for _ in range(min(slots, len(truth) // players)):
            weight = np.where(free, need ** focus, 0.0)
            if weight.sum() <= 0.0:  # no free bot has any pair left in doubt: any free bot
                weight = free.astype(float)
            anchor = _pick(weight, rng)
            free[anchor] = False
            seats = [anchor]
            while len(seats) < players:
                if rng.random() < long or math.isinf(w):
                    weight = free.astype(float)
                elif width == "wrong" and (free & wrong[anchor]).any():
                    weight = (free & wrong[anchor]).astype(float)
                elif w == 0.0:
                    weight = np.where(free, gap[anchor] == gap[anchor][free].min(), False).astype(float)
                else:
                    weight = np.where(free, np.exp(-(gap[anchor] / scale[anchor]) ** 2), 0.0)
                    if weight.sum() <= 0.0:  # every free bot beyond the kernel's reach: the nearest
                        weight = np.where(free, gap[anchor] == gap[anchor][free].min(), False).astype(float)
                seats.append(_pick(weight, rng))
                free[seats[-1]] = False
            rng.shuffle(seats)
            tables.append(Table(tuple(seats), f"oracle w={width} focus={focus} long={long} actual={actual}"))
        return tables

    return schedule


def _pick(weight: np.ndarray, rng: random.Random) -> int:
    """An index drawn with probability ~ ``weight`` (from ``rng``, so a run is reproducible)."""
    if weight.sum() <= 0.0:
        raise ValueError("no bot to draw")
    cumulative = np.cumsum(weight)
    return int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))


def sweep(players: int, designs: Sequence[tuple[str, Scheduler]], seeds: int, streams: int, limit: int,
          baseline: bool = True) -> None:
    """Print random tables' matches to tau 0.9, then every design's, with its ratio to random's median: on
    benchmark 1's runs (seeds 1..S, stream 0) and on all S x R runs (R streams of results per seed).
    ``baseline`` False: medians only (random tables' runs are the same in every sweep of these seeds)."""
    runs_of = [(seed, stream) for stream in range(streams) for seed in range(1, seeds + 1)]
    base: list[int] = []
    for name, scheduler in [("random tables", random_tables)] * baseline + [*designs]:
        runs = [matches_to_tau(BOTS, players, scheduler, seed, GOAL, limit, stream)[0] for seed, stream in runs_of]
        first = runs[:seeds]
        base = base or runs if baseline else base
        ratios = (f", ratio {median(first) / median(base[:seeds]):.3f}", f", ratio {median(runs) / median(base):.3f}") \
            if base else ("", "")
        capped = sum(r >= limit for r in runs)
        print(f"{players} players, {name}: benchmark 1's seeds {first} median {median(first):.0f}{ratios[0]}; "
              f"all {len(runs)} runs median {median(runs):.0f}{ratios[1]}"
              + (f" ({capped} runs capped at {limit})" if capped else ""), flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.ladder oracle", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=int, nargs="+", default=[3, 4])
    parser.add_argument("--widths", default="0,100,200,400,inf,1sd,2sd", help="comma-separated (docstring)")
    parser.add_argument("--focus", default="0,1", help="comma-separated exponents of need for the anchor draw")
    parser.add_argument("--long", default="0", help="comma-separated shares of opponents drawn uniformly")
    parser.add_argument("--seeds", type=int, default=12)
    parser.add_argument("--limit", type=int, default=4000, help="matches after which a run counts as never")
    parser.add_argument("--need", choices=("expected", "actual"), default="expected",
                        help="anchor need: expected misordered pairs from the truth, or the fit's actual ones")
    parser.add_argument("--streams", type=int, default=1, help="runs per seed: other draws of the results")
    parser.add_argument("--planner", action="store_true", help="also the real planner, on the same runs")
    parser.add_argument("--no-random", action="store_true",
                        help="skip random tables (deterministic: the same runs as in any other sweep)")
    args = parser.parse_args(argv)
    print(f"oracle sweep: {BOTS} bots, Kendall tau {GOAL}, seeds 1..{args.seeds} x {args.streams} stream(s), "
          f"limit {args.limit} matches, "
          f"{SLOTS} tables a round (bench/ladder_oracle.py)", flush=True)
    actual = args.need == "actual"
    designs = [(f"w={w} focus={f:g} long={x:g} need={args.need}", oracle(w, f, x, actual))
               for w in args.widths.split(",") for f in _floats(args.focus) for x in _floats(args.long)]
    designs = [("the planner", planner)] * args.planner + designs
    for players in args.players:
        sweep(players, designs, args.seeds, args.streams, args.limit, not args.no_random)
    return 0


def _floats(text: str) -> list[float]:
    return [float(part) for part in text.split(",")]
