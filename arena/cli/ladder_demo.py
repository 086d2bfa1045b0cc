"""``arena demo`` with the ladder on (the default): the sample bots are submitted, and the terminal shows
the ladder placing them and its table settling, live, with no tournament. (``ARENA_LADDER=0`` gives the
tournament demo of ``arena.cli.demo``.)"""

from __future__ import annotations

import time
from collections.abc import Callable

from arena.composition import Context
from arena.runtime import terminal
from arena.services.leaderboards import leaderboard

SHOW_EVERY_S = 3.0
TOP = 4


def board_line(board: dict, elapsed: float) -> str:
    """One line per leaderboard: matches, provisional count, the top bots with their intervals."""
    entries = board["entries"]
    ladder = board.get("ladder") or {}
    provisional = sum(1 for e in entries if e.get("provisional", True))
    state = "settled" if ladder.get("settled") else "settling"
    top = "  ".join(f"{e['rank']}. {e['name']} {e['elo']:.0f} [{e['elo_low']:.0f}, {e['elo_high']:.0f}]"
                    + ("*" if e.get("provisional", True) else "") for e in entries[:TOP])
    return (f"[{elapsed:5.0f} s] {board['game']}, {board['players']}p: {board['matches']} matches, "
            f"{provisional}/{len(entries)} provisional, {state} | {top or 'no rated match yet'}")


def watch_ladders(context: Context, boards: list[tuple[str, int]], matches: int, timeout_s: float,
                  should_stop: Callable[[], bool]) -> None:
    """Print each board's line whenever it changes (at most every ``SHOW_EVERY_S``) until every board is
    settled or has ``matches`` rated matches, the time is up, or a stop."""
    started = time.monotonic()
    shown: dict[tuple[str, int], str] = {}
    terminal.say("ladder: placing the bots (* = provisional: its interval is still wide)")
    while not should_stop() and time.monotonic() - started < timeout_s:
        done = True
        for game, players in boards:
            with context.db.session(readonly=True) as session:
                board = leaderboard(session, game, players)
            line = board_line(board, time.monotonic() - started)
            key = line.split("]", 1)[1]
            if shown.get((game, players)) != key:
                terminal.say(line)
                shown[(game, players)] = key
            ladder = board.get("ladder") or {}
            done = done and (bool(ladder.get("settled")) or board["matches"] >= matches)
        if done:
            return
        end = time.monotonic() + SHOW_EVERY_S
        while time.monotonic() < end and not should_stop():
            time.sleep(0.2)
