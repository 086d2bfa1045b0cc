"""``arena ladder list|pause|resume|tune|run``: the organizer's ladder controls from the shell (the same
service calls as the API and the ``/ladders`` page), and the scheduler process itself."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from arena.composition import Context, build_context
from arena.config import ConfigError, load_settings
from arena.runtime.logging_setup import configure_logging


def register(sub: argparse._SubParsersAction) -> None:
    from arena.services.ladders import TUNABLE

    ladder = sub.add_parser("ladder", help="the rated ladders: list, pause, resume, tune; run the scheduler")
    ladder_sub = ladder.add_subparsers(dest="ladder_command", required=True)
    listing = ladder_sub.add_parser("list", help="every ladder with its state")
    listing.add_argument("--json", action="store_true", help="print JSON (as GET /api/ladders)")
    listing.set_defaults(func=cmd_list)
    pause = ladder_sub.add_parser("pause", help="schedule no new table (what is owed is still played)")
    pause.add_argument("ladder_id", type=int)
    pause.add_argument("--reason", default=None)
    pause.set_defaults(func=cmd_pause)
    resume = ladder_sub.add_parser("resume", help="schedule again")
    resume.add_argument("ladder_id", type=int)
    resume.set_defaults(func=cmd_resume)
    tune = ladder_sub.add_parser("tune", help="override a setting of one ladder ('default' restores the arena's)")
    tune.add_argument("ladder_id", type=int)
    for name, (low, high) in TUNABLE.items():
        tune.add_argument(f"--{name.replace('_', '-')}", dest=name, default=None, metavar="N",
                          help=f"{low}-{high}" + ("" if name == "time_limit_ms" else " or 'default'"))
    tune.set_defaults(func=cmd_tune)
    run = ladder_sub.add_parser("run", help="run a ladder scheduler (one is active at a time; needs ARENA_REDIS_URL)")
    run.add_argument("--quiet-settling", action="store_true",
                     help="log a board's settling instead of printing it (arena demo prints its own board lines)")
    run.set_defaults(func=cmd_run)


def _context(migrate: bool = True) -> Context:
    try:
        return build_context(load_settings(), migrate=migrate)
    except ConfigError as exc:
        raise SystemExit(f"configuration error: {exc}") from None


def _operator() -> Any:
    """Whoever runs the CLI on the arena's own database acts as an organizer (as ``arena token create``)."""
    from arena.storage.models import Account

    return Account(name="the command line", is_admin=True)


def _act(action: Callable[..., Any], *args: Any) -> int:
    from arena.services.errors import ServiceError
    from arena.services.ladders import ladder_json

    context = _context()
    try:
        with context.db.session() as session:
            ladder = action(session, _operator(), *args)
            data = ladder_json(session, ladder, context.settings)
    except ServiceError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 1
    print(_line(data))
    return 0


def _line(data: dict[str, Any]) -> str:
    from arena.services.ladders import board_label

    state = data["status"] + (f" ({data['paused_reason']})" if data["paused_reason"] else "")
    tuned = ", ".join(f"{k}={v}" for k, v in sorted(data["overrides"].items())) or "arena defaults"
    # the pages' words: an empty ladder read "placing/settling" here and "waiting for bots" on its page
    table = ("settled" if data["settled"] else f"waiting for bots (a table needs {data['players']} of different "
             f"owners)" if data["waiting"] else "placing and settling")
    return (f"#{data['id']} {board_label(data['game'], data['players'])}: {state}; "
            f"{table}; {data['bots']} bot(s), "
            f"{data['provisional']} provisional; {data['matches_per_hour']} matches in the last hour, "
            f"{data['tables']} tables so far; {tuned}")


def cmd_list(args: argparse.Namespace) -> int:
    from arena.services.ladders import ensure_ladders, ladder_json

    context = _context()
    with context.db.session() as session:
        ladders = ensure_ladders(session, context.settings)
        rows = [ladder_json(session, ladder, context.settings) for ladder in ladders]
    for row in rows:
        print(json.dumps(row) if args.json else _line(row))
    return 0


def cmd_pause(args: argparse.Namespace) -> int:
    from arena.services.ladders import pause_ladder

    return _act(pause_ladder, args.ladder_id, args.reason)


def cmd_resume(args: argparse.Namespace) -> int:
    from arena.services.ladders import resume_ladder

    return _act(resume_ladder, args.ladder_id)


def cmd_tune(args: argparse.Namespace) -> int:
    from arena.services.ladders import TUNABLE, tune_ladder

    changes: dict[str, Any] = {}
    for name in TUNABLE:
        raw = getattr(args, name)
        if raw is None:
            continue
        if raw == "default":
            changes[name] = None
            continue
        try:
            changes[name] = int(raw)
        except ValueError:
            print(f"error: --{name.replace('_', '-')} must be an integer or 'default'", file=sys.stderr)
            return 2
    if not changes:
        print("error: nothing to tune; pass at least one setting", file=sys.stderr)
        return 2
    return _act(tune_ladder, args.ladder_id, changes)


def cmd_run(args: argparse.Namespace) -> int:
    from arena.runtime.lifeline import watch_lifeline_from_env

    watch_lifeline_from_env()  # started by arena up: die with it (``python -m arena.cli`` watched already)
    from arena.runtime.ladder_runner import run_scheduler

    context = _context(migrate=False)
    configure_logging(context.settings)
    if context.queue is None:
        raise SystemExit("arena ladder run needs ARENA_REDIS_URL (arena up starts one for the embedded default)")
    return run_scheduler(context, tell_settling=not args.quiet_settling)
