"""``arena games``, ``arena play`` and ``arena replay``: the referee from the command line, no service."""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from pathlib import Path

from referee.errors import RulesError
from referee.games import GAMES
from referee.protocol import TimeControls
from referee.replay import verify_replay
from referee.report import summary_text
from referee.runner import BotSpec, play_match


def register(sub: argparse._SubParsersAction) -> None:
    games = sub.add_parser("games", help="list the registered games")
    games.set_defaults(func=cmd_games)

    play = sub.add_parser("play", help="play one match against running bots and print a summary")
    play.add_argument("--game", required=True, choices=sorted(GAMES))
    play.add_argument("--bot", action="append", required=True, metavar="URL",
                      help="a bot's base URL, once per seat in seat order")
    play.add_argument("--seed", type=int, default=None, help="match seed (random when omitted)")
    play.add_argument("--time-limit-ms", type=int, default=1000, help="per-decision limit")
    play.add_argument("--time-bank-ms", type=int, default=0, help="bank that overruns draw down")
    play.add_argument("--strike-limit", type=int, default=3, help="faults before a bot forfeits (0 = never)")
    play.add_argument("--params", default="{}", help="game parameters as a JSON object")
    play.add_argument("--secret", default=os.environ.get("ARENA_BOT_SECRET", ""),
                      help="signing secret shared by the bots (default $ARENA_BOT_SECRET)")
    play.add_argument("--out", type=Path, help="write the replay JSON here")
    play.set_defaults(func=cmd_play)

    replay = sub.add_parser("replay", help="verify a replay file step by step against the engine")
    replay.add_argument("file", type=Path)
    replay.set_defaults(func=cmd_replay)


def cmd_games(args: argparse.Namespace) -> int:
    for name in sorted(GAMES):
        spec = GAMES[name].spec
        kind = "simultaneous" if spec.simultaneous else "turn-based"
        print(f"{name:28} {spec.min_players}-{spec.max_players} players  {kind:12}  {spec.title}")
    return 0


def cmd_play(args: argparse.Namespace) -> int:
    try:
        params = json.loads(args.params)
        if not isinstance(params, dict):
            raise ValueError("not an object")
    except ValueError as exc:
        print(f"--params must be a JSON object: {exc}", file=sys.stderr)
        return 2
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    tc = TimeControls(decision_ms=args.time_limit_ms, time_bank_ms=args.time_bank_ms,
                      strike_limit=args.strike_limit)
    bots = [BotSpec(url, secret=args.secret, name=url.split("://", 1)[-1]) for url in args.bot]
    try:
        replay = play_match(args.game, bots, seed, params, tc)
    except RulesError as exc:
        print(f"cannot play this match: {exc}", file=sys.stderr)
        return 2
    print(summary_text(replay))
    if args.out:
        args.out.write_text(json.dumps(replay), encoding="utf-8")
        print(f"replay written to {args.out}")
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    try:
        doc = json.loads(args.file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"cannot read {args.file}: {exc}", file=sys.stderr)
        return 2
    report = verify_replay(doc if isinstance(doc, dict) else {})
    print(f"{args.file}: {report.summary()}")
    return 0 if report.ok else 1
