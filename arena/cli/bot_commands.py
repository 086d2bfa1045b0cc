"""``arena bot ...``: an owner manages their bots on a running arena through its API (the same calls as
the My bots page): list, show, submit, move, version, pause, resume, capacity, secret, retire, events.

The arena's address and your token come from ``--arena``/``--token`` or ``ARENA_URL``/``ARENA_TOKEN``."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

import requests

TIMEOUT_S = 60  # a submission, a move or a resume waits for the bot's health check


def register(sub: argparse._SubParsersAction) -> None:
    bot = sub.add_parser("bot", help="manage your bots on a running arena (its API; ARENA_URL, ARENA_TOKEN)")
    bot.add_argument("--arena", default=os.environ.get("ARENA_URL", "http://127.0.0.1:8000"),
                     help="the arena's address (ARENA_URL)")
    bot.add_argument("--token", default=os.environ.get("ARENA_TOKEN", ""), help="your API token (ARENA_TOKEN)")
    verbs = bot.add_subparsers(dest="bot_command", required=True)
    verbs.add_parser("list", help="your bots with their ladder state")
    for verb, text in (("show", "one bot, its ladder state, rating and versions"), ("events", "a bot's history"),
                       ("pause", "off the ladder until you resume it"),
                       ("resume", "back on the ladder (a bot on probation is checked first)"),
                       ("secret", "a new signing secret, printed once"), ("retire", "off the ladder for good")):
        verbs.add_parser(verb, help=text).add_argument("bot_id", type=int)
    submit = verbs.add_parser("submit", help="submit a bot (health-checked); prints its secret once")
    submit.add_argument("name")
    submit.add_argument("url")
    submit.add_argument("game")
    move = verbs.add_parser("move", help="a new URL for the same version (moving hosts)")
    move.add_argument("bot_id", type=int)
    move.add_argument("url")
    version = verbs.add_parser("version", help="publish a new version (a new, provisional entry)")
    version.add_argument("bot_id", type=int)
    version.add_argument("url", nargs="?", help="leave out to declare the same URL new")
    capacity = verbs.add_parser("capacity", help="matches the bot may play at once")
    capacity.add_argument("bot_id", type=int)
    capacity.add_argument("capacity", type=int)
    bot.set_defaults(func=cmd_bot)


def _call(args: argparse.Namespace) -> tuple[str, str, Any]:
    """(method, path, JSON body) of the API call for the verb."""
    bot = f"/api/bots/{getattr(args, 'bot_id', 0)}"
    return {
        "list": ("GET", "/api/bots?mine=1", None),
        "show": ("GET", bot, None),
        "events": ("GET", f"{bot}/events", None),
        "submit": ("POST", "/api/bots", {"name": getattr(args, "name", ""), "url": getattr(args, "url", ""),
                                         "game": getattr(args, "game", "")}),
        "move": ("PATCH", bot, {"url": getattr(args, "url", "")}),
        "version": ("POST", f"{bot}/versions", {"url": args.url} if getattr(args, "url", None) else {}),
        "pause": ("POST", f"{bot}/pause", {}),
        "resume": ("POST", f"{bot}/resume", None),
        "capacity": ("POST", f"{bot}/capacity", {"capacity": getattr(args, "capacity", 1)}),
        "secret": ("POST", f"{bot}/secret", None),
        "retire": ("POST", f"{bot}/retire", None),
    }[args.bot_command]


def _line(bot: dict[str, Any]) -> str:
    ladder = bot.get("ladder") or {}
    state = f"{ladder.get('state', '?')}: {ladder.get('reason', '')}" if ladder else bot.get("status", "")
    return f"#{bot['id']:<5} {bot['name'][:30]:30} v{bot.get('version_number', 1):<3} {bot['game']:26} {state}"


def cmd_bot(args: argparse.Namespace) -> int:
    method, path, body = _call(args)
    headers = {"Authorization": f"Bearer {args.token}"} if args.token else {}
    try:
        response = requests.request(method, args.arena.rstrip("/") + path, json=body, headers=headers,
                                    timeout=TIMEOUT_S)
    except requests.RequestException as exc:
        print(f"error: cannot reach the arena at {args.arena}: {type(exc).__name__}", file=sys.stderr)
        return 2
    data = response.json() if response.content else None
    if response.status_code >= 400:
        message = data.get("error", response.reason) if isinstance(data, dict) else response.reason
        print(f"error ({response.status_code}): {message}", file=sys.stderr)
        for problem in (data or {}).get("details", {}).get("problems", []) if isinstance(data, dict) else []:
            print(f"  - {problem}", file=sys.stderr)
        return 1
    if args.bot_command == "list":
        for bot in data:
            print(_line(bot))
    elif args.bot_command == "events":
        for event in data:
            print(f"{event['created_at'][:16].replace('T', ' ')}  {event['summary']}")
    else:
        print(json.dumps(data, indent=2))
        if isinstance(data, dict) and "secret" in data:
            print("the secret above is shown only once: restart your bot with it", file=sys.stderr)
    return 0
