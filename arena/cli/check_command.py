"""``arena check URL``: the validation episode of referee/checker.py against a running bot, printed as a
checklist with a fix for each failure; exits 1 when the bot would fault in a match (what a submission
would refuse), 0 otherwise (warnings included)."""

from __future__ import annotations

import argparse
import json
import os

from referee.checker import check_protocol
from referee.games import GAMES
from referee.protocol import TimeControls


def register(sub: argparse._SubParsersAction) -> None:
    check = sub.add_parser("check", help="run the protocol against a bot and print what is wrong, with fixes")
    check.add_argument("url", help="the bot's base URL, e.g. http://127.0.0.1:9005")
    check.add_argument("--game", action="append", choices=sorted(GAMES), metavar="GAME",
                       help="a game to play (repeatable; default: every game the bot declares)")
    check.add_argument("--secret", default=os.environ.get("ARENA_BOT_SECRET", ""),
                       help="the bot's signing secret (default $ARENA_BOT_SECRET); without it signatures are "
                            "not probed")
    check.add_argument("--time-limit-ms", type=int, default=1000, help="per-decision limit to check against")
    check.add_argument("--json", action="store_true", help="print the checklist as JSON")
    check.set_defaults(func=cmd_check)


def cmd_check(args: argparse.Namespace) -> int:
    report = check_protocol(args.url, args.secret, args.game,
                            time_controls=TimeControls(decision_ms=args.time_limit_ms))
    if args.json:
        print(json.dumps({"ok": report.ok, "elapsed_s": round(report.elapsed_s, 3),
                          "items": [{"name": i.name, "status": str(i.status), "detail": i.detail, "fix": i.fix}
                                    for i in report.items]}, indent=2))
    else:
        print(f"checking {args.url}")
        print(report.text())
    return 0 if report.ok else 1
