"""``arena demo``: sample bots, registered through the service; the ladder places them and its tables
settle, live (``ARENA_LADDER=0``: a small round robin per game with a progress bar instead); then the
leaderboards; and two more sample bots, with no secret, that any new account can submit as its own (their
addresses and how to submit one are printed)."""

from __future__ import annotations

import time
from collections.abc import Callable

from sqlalchemy import select

from arena.cli.ladder_demo import watch_ladders
from arena.composition import Context
from arena.runtime import terminal
from arena.services import bots as bot_service
from arena.services import tournaments as tournament_service
from arena.services.accounts import create_account
from arena.services.ladders import board_label
from arena.services.leaderboards import leaderboard, stale_boards
from arena.storage.models import Account, Bot, BotStatus
from sample_bots import heuristic_bot, random_bot
from sample_bots.sdk import BotServer, start_in_thread

LADDER_WATCH_S = 600.0  # the ladder demo watches until every board has settled, or this long (per --cycles)
DEMO_GAMES = (("piranha-pedro", "pp", 3), ("pajarracos", "pj", 3))
KINDS = (("random", random_bot.make_bot), ("heuristic", heuristic_bot.make_bot))
# The ladder demo's bots of each game, name suffix -> share of decisions played at random instead of by the
# heuristic: strengths a step apart, so that the ladder can tell every two neighbours apart within minutes.
# (Before: two random and two heuristic bots per game. Identical bots are never told apart, so only the tie
# rule settles them, both intervals within 150 Elo; and the heuristic beats random so surely, some 650-900
# Elo, that those results pin neither down: 800 matches per board in, neither board had settled.) Gaps
# between neighbours on the settled boards of the runs of 2026-12-02 (docs/benchmarks.md, "The ladder demo"):
# Pajarracos 200-300, 115-255 and 240-370 Elo (5 runs), Piranha Pedro 350-460, 180-200 and 170-230 (2 runs).
# A 10 % bot was tried in Piranha Pedro: within 10-70 Elo of its neighbour in both runs, so left out.
LADDER_BOTS = (("heuristic", 0.0), ("blunders-25", 0.25), ("blunders-50", 0.5), ("random", 1.0))


def demo_bots(prefix: str) -> list[tuple[str, BotServer]]:
    """The ladder demo's bots of one game, started: graded strengths (``LADDER_BOTS``), each seeded."""
    return [(f"{prefix}-{suffix}", start_in_thread(random_bot.make_bot(number) if share == 1.0
                                                   else heuristic_bot.make_bot(number, blunders=share)))
            for number, (suffix, share) in enumerate(LADDER_BOTS, start=1)]


def tournament_bots(prefix: str) -> list[tuple[str, BotServer]]:
    """The tournament demo's bots of one game (``ARENA_LADDER=0``): two random and two heuristic bots."""
    return [(f"{prefix}-{kind}-{number}", start_in_thread(make(number))) for kind, make in KINDS for number in (1, 2)]


def _organizer(context: Context) -> int:
    with context.db.session() as session:
        account = session.scalar(select(Account).where(Account.name == "demo"))
        if account is None:
            account, token = create_account(session, "demo", admin=True)
            print(f"created organizer 'demo'; token: {token}")
        return account.id


def _register_bots(context: Context, owner_id: int) -> tuple[dict[str, list[int]], list[BotServer]]:
    """Start the demo's bots of every game and register (or re-point) them."""
    servers: list[BotServer] = []
    by_game: dict[str, list[int]] = {}
    for game, prefix, _seats in DEMO_GAMES:
        for name, server in (demo_bots(prefix) if context.settings.ladder else tournament_bots(prefix)):
            servers.append(server)
            with context.db.session(readonly=True) as session:  # health checks run outside transactions
                existing = session.execute(select(Bot.id, Bot.secret)
                                           .where(Bot.owner_id == owner_id, Bot.name == name)).first()
            if existing is None:
                data, secret = bot_service.submit_bot(context.db, owner_id, name, server.url, game,
                                                      context.settings, context.health_check,
                                                      knows_secret=True)  # handed to the server just below
                bot_id = data["id"]
            else:
                bot_id, secret = existing
                bot_service.change_bot(context.db, bot_id, owner_id, {"url": server.url, "status": "active"},
                                       context.settings, context.health_check)
            server.bot.secret = secret
            by_game.setdefault(game, []).append(bot_id)
    _disable_others(context, owner_id, {b for ids in by_game.values() for b in ids})
    return by_game, servers


def _disable_others(context: Context, owner_id: int, current: set[int]) -> None:
    """The demo's bots of an earlier population on the same data folder (their servers died with that demo)
    leave the ladder, instead of being seated until probation takes them off."""
    with context.db.session(readonly=True) as session:
        stale = session.scalars(select(Bot.id).where(Bot.owner_id == owner_id, Bot.status == BotStatus.ACTIVE,
                                                     Bot.retired_at.is_(None), Bot.id.not_in(current))).all()
    for bot_id in stale:
        bot_service.change_bot(context.db, bot_id, owner_id, {"status": BotStatus.DISABLED}, context.settings,
                               context.health_check)


def start_spare_bots() -> list[tuple[str, BotServer]]:
    """Sample bots for visitors to submit: no secret, so they answer whichever account's signatures (the
    demo's own bots check the demo account's secret, and would refuse anybody else's health check)."""
    return [(kind, start_in_thread(make(100 + n))) for n, (kind, make) in enumerate(KINDS)]


def how_to_submit(address: str, spares: list[tuple[str, BotServer]], hold_s: int = 0) -> str:
    """What the demo prints so a new user can submit a sample bot, on the page or with the API. ``hold_s``:
    how long a submitted bot waits off the ladder for its owner to restart it (``ARENA_LADDER_NEW_SECRET_S``)."""
    site = address or "http://127.0.0.1:8000/"
    lines = ["", "Sample bots you can submit as your own (no secret: they accept any account's requests):"]
    lines += [f"  {server.url}  ({kind} bot: {', '.join(server.bot.games)})" for kind, server in spares]
    url = spares[0][1].url
    lines += [
        f"Submit one: sign up at {site}signup, then New bot ({site}bots/new): a name, one of these URLs, a game.",
        "Or with the API:",
        f"  TOKEN=$(curl -s -X POST {site}api/accounts -H 'Content-Type: application/json' "
        "-d '{\"name\": \"me\"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"token\"])')",
        f"  curl -s -X POST {site}api/bots -H \"Authorization: Bearer $TOKEN\" -H 'Content-Type: application/json' "
        f"-d '{{\"name\": \"my-first\", \"url\": \"{url}\", \"game\": \"pajarracos\"}}'",
        f"Your bots, their ladder state and what you can do with them: {site}me/bots",
    ]
    if hold_s > 0:
        lines.append(f"A bot joins the ladder no sooner than {hold_s} s after it is submitted, once it refuses a "
                     "request without a signature (time to restart one of your own with its secret). These sample "
                     "bots check no signature, so they join only when resumed: Resume it there, or "
                     f"curl -s -X POST {site}api/bots/ID/resume -H \"Authorization: Bearer $TOKEN\" "
                     "(ID: the submission's answer), and it joins at once.")
    return "\n".join(lines)


POLL_S = 0.3  # how often the demo looks at a tournament's progress


def _hold_s(context: Context) -> int:
    return context.settings.ladder_new_secret_s if context.settings.ladder else 0


def run_demo(context: Context, cycles: int = 1, address: str = "", timeout_s: float = 900,
             should_stop: Callable[[], bool] = lambda: False,
             keeps_serving: bool = True) -> tuple[dict[str, int], list[BotServer]]:
    """Returns the tournaments and the running bot servers (keep them while pages are served).

    With the ladder on (the default) there is no tournament: the bots are submitted and the ladder's
    progress is shown live (``arena.cli.ladder_demo``) until every board has settled or ``LADDER_WATCH_S`` *
    ``cycles`` have passed, and the terminal is told which. Returns early once ``should_stop()`` is true."""
    owner_id = _organizer(context)
    by_game, servers = _register_bots(context, owner_id)
    spares = start_spare_bots()
    servers += [server for _kind, server in spares]
    print(how_to_submit(address, spares, _hold_s(context)), flush=True)
    if context.settings.ladder:
        if address:
            print(f"the ladder plays by itself: follow it at {address}ladders and {address}leaderboards/<game>")
        watch_ladders(context, [(game, seats) for game, _prefix, seats in DEMO_GAMES], LADDER_WATCH_S * cycles,
                      should_stop)
        if not should_stop():
            for game, _prefix, seats in DEMO_GAMES:
                _print_leaderboard(context, game, seats)
        return {}, servers
    tournaments: dict[str, int] = {}
    for game, _prefix, seats in DEMO_GAMES:
        with context.db.session() as session:
            owner = session.get(Account, owner_id)
            assert owner is not None
            tournament = tournament_service.create_tournament(
                session, owner, {"game": game, "bots": by_game[game], "seats": seats, "cycles": cycles},
                context.settings.deal_key())
            tournaments[game] = tournament.id
        with context.db.session() as session:
            tournament_service.queue_tournament(session, context.queue, tournaments[game])
    print(f"tournaments: {', '.join(f'{g} #{t}' for g, t in tournaments.items())}"
          + (f"  (follow them at {address}tournaments/<id>)" if address else ""))
    started = time.monotonic()
    for game, tournament_id in tournaments.items():
        if not follow_tournament(context, game, tournament_id, started + timeout_s, should_stop):
            return tournaments, servers
    while time.monotonic() - started < timeout_s:  # the last refits are queued a moment after the matches
        if should_stop():
            return tournaments, servers
        with context.db.session(readonly=True) as session:
            if not stale_boards(session):
                break
        time.sleep(0.3)
    for game, _prefix, seats in DEMO_GAMES:
        _print_leaderboard(context, game, seats)
    if keeps_serving:  # said again under the leaderboards, where the eye is when the demo settles
        print(how_to_submit(address, spares, _hold_s(context)), flush=True)
    return tournaments, servers


def follow_tournament(context: Context, game: str, tournament_id: int, deadline: float,
                      should_stop: Callable[[], bool], poll_s: float = POLL_S) -> bool:
    """Show a tournament's progress bar until it is over; False when stopped or past ``deadline``.
    Reads every ``poll_s`` in a read-only unit of work: a loop that read without pausing took a core and
    SQLite's write lock from the workers it was waiting for (so a demo on two cores sometimes never ended)."""
    with context.db.session(readonly=True) as session:
        total = tournament_service.progress(session, tournament_id)["total"]
    with terminal.bar(total, game) as progress:
        while True:
            with context.db.session(readonly=True) as session:
                p = tournament_service.progress(session, tournament_id)
            if should_stop():
                return False
            progress.update(p["done"] - progress.n)
            if p["done"] + p["cancelled"] >= p["total"]:
                return True
            if time.monotonic() > deadline:
                terminal.say("the demo tournament did not finish in time; are the workers running?")
                return False
            time.sleep(poll_s)


def _print_leaderboard(context: Context, game: str, players: int) -> None:
    """The board as its page shows it: rank ranges, intervals, provisional bots marked ``*``."""
    with context.db.session() as session:
        board = leaderboard(session, game, players)
    ladder = board.get("ladder") or {}
    state = "" if not ladder else "  (settled)" if ladder.get("settled") else "  (still settling: the ladder plays on)"
    print(f"\n{board_label(game, players)}{state}")
    print(f"{'rank':>7}  {'bot':24} {'Elo':>6}  {'95% interval':>15}  {'games':>5}")
    for e in board["entries"]:
        ranks = str(e["rank"]) if e["rank_low"] == e["rank_high"] else f"{e['rank_low']}-{e['rank_high']}"
        mark = " *" if ladder and e.get("provisional") else ""
        print(f"{ranks:>7}  {e['name'][:24]:24} {e['elo']:>6.0f}  [{e['elo_low']:>5.0f}, {e['elo_high']:>5.0f}]"
              f"  {e['games']:>5}{mark}")
    if ladder and any(e.get("provisional") for e in board["entries"]):
        print("  * provisional: its interval is still wider than the arena's threshold")
