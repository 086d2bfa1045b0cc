"""The ``arena`` command line: one sub-command per verb, each a thin call into the layers below."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from arena.cli import (
    bot_commands,
    check_command,
    ladder_commands,
    match_commands,
    service_commands,
    tournament_commands,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="arena", description="Tournament-grade bot arena over HTTP.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    match_commands.register(sub)
    check_command.register(sub)
    service_commands.register(sub)
    tournament_commands.register(sub)
    ladder_commands.register(sub)
    bot_commands.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
