"""The ``arena`` command line: one sub-command per verb, each a thin call into the layers below."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from referee.games import GAMES

Command = Callable[[argparse.Namespace], int]


def _games(args: argparse.Namespace) -> int:
    """List the registered games."""
    for name in sorted(GAMES):
        spec = GAMES[name].spec
        kind = "simultaneous" if spec.simultaneous else "turn-based"
        print(f"{name:28} {spec.min_players}-{spec.max_players} players  {kind:12}  {spec.title}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="arena", description="Tournament-grade bot arena over HTTP.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    games = sub.add_parser("games", help="list the registered games")
    games.set_defaults(func=_games)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    func: Command = args.func
    return func(args)


if __name__ == "__main__":
    sys.exit(main())
