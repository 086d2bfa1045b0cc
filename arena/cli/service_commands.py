"""Commands that run the service: ``up``, ``demo``, ``worker``, ``reconcile``, ``token create``, ``db``."""

from __future__ import annotations

import argparse
import os
import sys
import time

from arena.composition import build_context
from arena.config import ConfigError, Settings, load_settings
from arena.runtime.logging_setup import configure_logging


def register(sub: argparse._SubParsersAction) -> None:
    up = sub.add_parser("up", help="run the arena: web app, worker(s), embedded Redis and SQLite by default")
    _serve_options(up)
    up.set_defaults(func=cmd_up)

    demo = sub.add_parser("demo", help="arena up + sample bots placed by the ladder (a small tournament with "
                                       "ARENA_LADDER=0), then keep serving")
    _serve_options(demo)
    demo.add_argument("--exit", action="store_true", help="stop after printing the leaderboard")
    demo.add_argument("--cycles", type=int, default=1,
                      help="round-robin cycles per tournament (ARENA_LADDER=0); with the ladder, the demo "
                           "watches until every board settles or 10 minutes per cycle have passed")
    demo.set_defaults(func=cmd_demo)

    worker = sub.add_parser("worker", help="run one match worker (needs ARENA_REDIS_URL)")
    worker.add_argument("--burst", action="store_true", help="exit when the queue is empty")
    worker.set_defaults(func=cmd_worker)

    rec = sub.add_parser("reconcile", help="re-queue every unfinished match the database knows of")
    rec.set_defaults(func=cmd_reconcile)

    token = sub.add_parser("token", help="API tokens")
    token_sub = token.add_subparsers(dest="token_command", required=True)
    create = token_sub.add_parser("create", help="create an account and print its token (last word)")
    create.add_argument("name")
    create.add_argument("--admin", action="store_true", help="an organizer, allowed to run tournaments")
    create.set_defaults(func=cmd_token_create)

    db = sub.add_parser("db", help="database maintenance")
    db_sub = db.add_subparsers(dest="db_command", required=True)
    upgrade = db_sub.add_parser("upgrade", help="apply every pending migration")
    upgrade.set_defaults(func=cmd_db_upgrade)


def _serve_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--workers", type=int, default=3,  # the ladder keeps one free for placements
                        help="match worker processes to start (the ladder leaves ARENA_LADDER_SPARE_WORKERS "
                             "of them free for a new bot's first match)")


def _settings() -> Settings:
    try:
        return load_settings()
    except ConfigError as exc:
        raise SystemExit(f"configuration error: {exc}") from None


def cmd_up(args: argparse.Namespace) -> int:
    from arena.runtime.stack import Stack

    stack = Stack(_settings(), args.workers)
    stack.install_signal_handlers()
    try:
        context = stack.start(args.host, args.port)
        print(f"arena up: http://{args.host}:{args.port}/  (data in {context.settings.data_dir}, "
              f"{args.workers} worker(s), Redis {stack.redis_label}; Ctrl-C to stop)", flush=True)
        stack.wait()
    finally:
        stack.stop()
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from arena.cli.demo import run_demo
    from arena.runtime.stack import Stack
    from arena.runtime.terminal import say

    # the terminal is for people: the ladder's placements and the boards, not a log line per match (the
    # workers and the scheduler inherit it; ARENA_LOG_LEVEL=INFO shows those lines again)
    os.environ.setdefault("ARENA_LOG_LEVEL", "WARNING")
    # the workers' lines above the progress bars; the boards' settling is told by the demo's own lines
    stack = Stack(_settings(), args.workers, output=say, scheduler_args=("--quiet-settling",))
    stack.install_signal_handlers()
    try:
        context = stack.start(args.host, args.port)
        # the bots are threads of this process: they end with it, after the workers that call them
        run_demo(context, cycles=args.cycles, address=f"http://{args.host}:{args.port}/",
                 should_stop=stack.stop_requested.is_set, keeps_serving=not args.exit)
        if not args.exit and not stack.stop_requested.is_set():
            print(f"\nPages: http://{args.host}:{args.port}/  (Ctrl-C to stop)", flush=True)
            stack.wait()
    finally:
        stack.stop()
    return 0


def cmd_worker(args: argparse.Namespace) -> int:
    from arena.runtime.lifeline import watch_lifeline_from_env

    watch_lifeline_from_env()  # started by arena up: die with it (``python -m arena.cli`` watched already)
    from arena.runtime.worker import run_worker

    settings = _settings()
    configure_logging(settings)
    if not settings.redis_url:
        raise SystemExit("arena worker needs ARENA_REDIS_URL (arena up starts workers for the embedded default)")
    return run_worker(build_context(settings, migrate=False), burst=args.burst)


def cmd_reconcile(args: argparse.Namespace) -> int:
    from arena.services.reconcile import reconcile

    context = build_context(_settings())
    if context.queue is None:
        raise SystemExit("arena reconcile needs ARENA_REDIS_URL")
    with context.db.session() as session:
        outcome = reconcile(session, context.queue)
    print(", ".join(f"{k}: {v}" for k, v in outcome.items()))
    return 0


def cmd_token_create(args: argparse.Namespace) -> int:
    from arena.services.accounts import create_account
    from arena.services.errors import ServiceError

    context = build_context(_settings())
    try:
        with context.db.session() as session:
            account, token = create_account(session, args.name, admin=args.admin)
            role = "organizer" if account.is_admin else "user"
    except ServiceError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 1
    print(f"created {role} {args.name!r}; token: {token}")
    return 0


def cmd_db_upgrade(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    context = build_context(_settings(), migrate=True)
    print(f"database {context.db.engine.url.render_as_string(hide_password=True)} is up to date "
          f"({time.perf_counter() - started:.1f} s)")
    return 0
