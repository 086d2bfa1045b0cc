"""``arena tournament`` and ``arena sprt``: round robins and head-to-head tests against running bots,
with no web service, database or queue."""

from __future__ import annotations

import argparse
import os
import random
import sys
from pathlib import Path

from tqdm.contrib.logging import logging_redirect_tqdm

from arena.cli.local_play import run_sprt, run_tournament
from arena.ratings.sprt import SprtStatus
from arena.runtime import terminal
from referee.errors import RulesError
from referee.games import GAMES
from referee.protocol import TimeControls


def register(sub: argparse._SubParsersAction) -> None:
    t = sub.add_parser("tournament", help="round robin against running bots; prints the Elo table")
    t.add_argument("--game", required=True, choices=sorted(GAMES))
    t.add_argument("--bot", action="append", required=True, metavar="URL", help="a bot's base URL (repeat)")
    t.add_argument("--seats", type=int, default=None, help="players per match (default: the game's minimum)")
    t.add_argument("--cycles", type=int, default=1)
    t.add_argument("--time-limit-ms", type=int, default=1000)
    t.add_argument("--workers", type=int, default=4, help="matches played at once")
    t.add_argument("--seed", type=int, default=None)
    t.add_argument("--secret", default=os.environ.get("ARENA_BOT_SECRET", ""))
    t.add_argument("--out", type=Path, help="keep every replay in this folder")
    t.set_defaults(func=cmd_tournament)

    s = sub.add_parser("sprt", help="sequential probability ratio test between two bots (stops by itself)")
    s.add_argument("--game", required=True, choices=sorted(GAMES))
    s.add_argument("--bot", action="append", required=True, metavar="URL", help="bot A, then bot B")
    s.add_argument("--elo0", type=float, default=0.0, help="H0: A is this much stronger (Elo)")
    s.add_argument("--elo1", type=float, default=20.0, help="H1: A is this much stronger (Elo)")
    s.add_argument("--alpha", type=float, default=0.05)
    s.add_argument("--beta", type=float, default=0.05)
    s.add_argument("--max-pairs", type=int, default=5000, help="give up (inconclusive) after this many pairs")
    s.add_argument("--time-limit-ms", type=int, default=1000)
    s.add_argument("--workers", type=int, default=4)
    s.add_argument("--seed", type=int, default=None)
    s.add_argument("--secret", default=os.environ.get("ARENA_BOT_SECRET", ""))
    s.set_defaults(func=cmd_sprt)


def cmd_tournament(args: argparse.Namespace) -> int:
    if len(args.bot) < 2:
        print("a tournament needs at least two --bot URLs", file=sys.stderr)
        return 2
    seats = args.seats or GAMES[args.game].spec.min_players
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    tc = TimeControls(decision_ms=args.time_limit_ms)
    progress = None

    def show(done: int, total: int) -> None:
        nonlocal progress
        if progress is None:
            progress = terminal.bar(total, args.game)
        progress.update(done - progress.n)

    try:
        with logging_redirect_tqdm():  # log lines above the bar, not into it
            result = run_tournament(args.game, args.bot, seats, args.cycles, tc, args.workers, seed, args.secret,
                                    args.out, show)
    except (RulesError, ValueError) as exc:
        print(f"cannot run this tournament: {exc}", file=sys.stderr)
        return 2
    finally:
        if progress is not None:
            progress.close()
    faults = sum(len(r["faults"]) for r in result.replays)
    print(f"{args.game}, {seats} seats, {len(result.replays)} matches, seed {seed}, {faults} fault(s)")
    print(f"{'rank':>7}  {'bot':28} {'Elo':>6}  {'95% interval':>15}  {'games':>5}  {'LOS next':>8}")
    for row in result.table:
        ranks = str(row.rank) if row.rank_low == row.rank_high else f"{row.rank_low}-{row.rank_high}"
        los = "" if row.los_next is None else f"{row.los_next:.3f}"
        print(f"{ranks:>7}  {result.names[row.bot][:28]:28} {row.elo:>6.0f}  [{row.elo_low:>5.0f}, "
              f"{row.elo_high:>5.0f}]  {row.games:>5}  {los:>8}")
    if args.out:
        print(f"replays in {args.out}")
    return 0


SPRT_LINE_EVERY = 10  # without a terminal, a progress line every this many pairs


def _sprt_line(status: SprtStatus) -> None:
    """The test's progress: rewritten in place on a terminal; in a log or a pipe, where a carriage return
    runs every update into one line, a line of its own every ``SPRT_LINE_EVERY`` pairs."""
    line = (f"pairs {status.units:>5}  score {status.mean:.3f}  LLR {status.llr:+.3f} "
            f"[{status.lower:+.3f}, {status.upper:+.3f}]")
    if sys.stdout.isatty():
        sys.stdout.write("\r" + line)
    elif status.units % SPRT_LINE_EVERY == 0:
        sys.stdout.write(line + "\n")
    sys.stdout.flush()


def cmd_sprt(args: argparse.Namespace) -> int:
    if len(args.bot) != 2:
        print("arena sprt needs exactly two --bot URLs (A, then B)", file=sys.stderr)
        return 2
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    tc = TimeControls(decision_ms=args.time_limit_ms)
    status = run_sprt(args.game, args.bot[0], args.bot[1], args.elo0, args.elo1, tc, args.workers, seed,
                      args.alpha, args.beta, args.max_pairs, args.secret, _sprt_line)
    if sys.stdout.isatty():
        print()  # past the line rewritten in place
    verdict = {"H1": f"H1 accepted: A is stronger by about {args.elo1:g} Elo or more",
               "H0": f"H0 accepted: A is not stronger than {args.elo0:g} Elo",
               "continue": f"inconclusive after {status.units} pairs"}[status.decision]
    print(f"{verdict} (LLR {status.llr:+.3f}, bounds [{status.lower:+.3f}, {status.upper:+.3f}], "
          f"{status.units} colour-swapped pairs, mean score of A {status.mean:.3f}, "
          f"alpha {args.alpha}, beta {args.beta}, seed {seed})")
    return 0
