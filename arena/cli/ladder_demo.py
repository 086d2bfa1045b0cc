"""``arena demo`` with the ladder on (the default): the sample bots are submitted, and the terminal shows
the ladder placing them and its table settling, live, with no tournament. (``ARENA_LADDER=0`` gives the
tournament demo of ``arena.cli.demo``.)

Everything printed is read from the leaderboard the pages show (``services.leaderboards.leaderboard``):
the bots' ratings and provisional marks, and the ladder's ``settled`` state (``Ladder.settled_at``, the
rule of ``arena.ratings.provisional``), never a second definition."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from arena.composition import Context
from arena.ratings.provisional import unresolved_pairs
from arena.runtime import terminal
from arena.services.ladders import board_label
from arena.services.leaderboards import leaderboard

SHOW_EVERY_S = 3.0  # how often the boards are read
QUIET_LINE_S = 20.0  # a board whose order and marks did not change gets a line this often (its matches)


def clock(elapsed: float) -> str:
    """``[ 2:05]``: minutes and seconds since the demo's bots were submitted."""
    minutes, seconds = divmod(int(elapsed), 60)
    return f"[{minutes:2d}:{seconds:02d}]"


def board_name(board: dict[str, Any]) -> str:
    return board_label(board["game"], board["players"])


def is_settled(board: dict[str, Any]) -> bool:
    """The ladder's settled state as the leaderboard and ladder pages show it."""
    return bool((board.get("ladder") or {}).get("settled"))


def board_line(board: dict[str, Any], elapsed: float) -> str:
    """One line per board: matches, how many bots are provisional, every bot by rank with its Elo and the
    half-width of its 95 % interval (``*``: provisional)."""
    entries = board["entries"]
    if not entries:  # "0 provisional" here would read as "every bot placed" before any was
        return f"{clock(elapsed)} {board_name(board)}: no rated match yet"
    provisional = sum(1 for e in entries if e["provisional"])
    state = "settled" if is_settled(board) else f"{provisional} provisional"
    bots = ", ".join(f"{e['name']} {e['elo']:.0f}±{(e['elo_high'] - e['elo_low']) / 2:.0f}"
                     + ("*" if e["provisional"] else "") for e in entries)
    return f"{clock(elapsed)} {board_name(board)}: {board['matches']} matches, {state} | {bots}"


def why_unsettled(board: dict[str, Any]) -> str:
    """What keeps a board from settling, in the terms of ``arena.ratings.provisional``."""
    entries = board["entries"]
    provisional = [e["name"] for e in entries if e["provisional"]]
    rows = [SimpleNamespace(**e) for e in entries]
    pairs = [f"{entries[i]['name']}/{entries[i + 1]['name']}" for i in unresolved_pairs(rows)]
    parts = ([f"provisional: {', '.join(provisional)}"] if provisional else []) + \
            ([f"neighbours neither told apart nor both within 150 Elo: {', '.join(pairs)}"] if pairs else [])
    return "; ".join(parts) or "the ladder has not looked at the latest refit yet"


@dataclass
class BoardWatch:
    """What the terminal was last told about one board, so that it hears each change once: a bot placed
    (provisional -> regular: its interval got narrow enough), the board settled (or unsettled again), the
    order or the provisional marks changed; otherwise a line every ``QUIET_LINE_S`` while matches go on."""

    placed: set[int] = field(default_factory=set)
    settled: bool = False
    shape: tuple[Any, ...] | None = None
    matches: int = 0
    said_at: float = float("-inf")
    settled_at: float | None = None

    def update(self, board: dict[str, Any], elapsed: float) -> list[str]:
        entries = board["entries"]
        lines = []
        for e in entries:
            if not e["provisional"] and e["bot_id"] not in self.placed:
                self.placed.add(e["bot_id"])
                lines.append(f"{clock(elapsed)} {board_name(board)}: {e['name']} placed after {e['games']} matches"
                             f" (interval {e['elo_low']:.0f}-{e['elo_high']:.0f}, rank {e['rank']}): no longer"
                             " provisional")
            elif e["provisional"]:
                self.placed.discard(e["bot_id"])
        settled = is_settled(board)
        if settled != self.settled:
            self.settled = settled
            self.settled_at = elapsed if settled else None
            lines.append(f"{clock(elapsed)} {board_name(board)}: "
                         + (f"SETTLED after {board['matches']} matches: every two neighbours told apart or both within"
                            " 150 Elo, the ladder slows to its maintenance rate"
                            if settled else "unsettled again: the ladder plays at full rate"))
        shape = (tuple(e["bot_id"] for e in entries), tuple(e["provisional"] for e in entries), settled)
        if lines or shape != self.shape or (board["matches"] != self.matches
                                             and elapsed - self.said_at >= QUIET_LINE_S):
            lines.append(board_line(board, elapsed))
            self.shape, self.matches, self.said_at = shape, board["matches"], elapsed
        return lines


def outcome_lines(boards: list[dict[str, Any]], watches: dict[tuple[str, int], BoardWatch], elapsed: float,
                  stopped: bool) -> list[str]:
    """Why the watch ended, said: every board settled (and when), or the time was up (or a stop) and what
    each unsettled board still lacks."""
    if all(is_settled(b) for b in boards):
        at = {key: watch.settled_at for key, watch in watches.items()}
        when = "; ".join(f"{board_name(b)} at {clock(at[(b['game'], b['players'])] or elapsed)[1:-1].strip()}"
                         for b in boards)
        return [f"{clock(elapsed)} every board settled ({when}); the ladder goes on at its maintenance rate"]
    head = ("stopped before every board settled" if stopped
            else "time up: not every board settled; the ladder plays on while the arena runs")
    lines = [f"{clock(elapsed)} {head}"]
    for b in boards:
        lines.append(f"  {board_name(b)}: " + ("settled" if is_settled(b) else f"settling ({why_unsettled(b)})"))
    return lines


def read_boards(context: Context, boards: list[tuple[str, int]]) -> list[dict[str, Any]]:
    with context.db.session(readonly=True) as session:
        return [leaderboard(session, game, players) for game, players in boards]


def watch_ladders(context: Context, boards: list[tuple[str, int]], timeout_s: float,
                  should_stop: Callable[[], bool],
                  say: Callable[[str], None] = terminal.say) -> bool:
    """Print each change of each board until every board has settled, the time is up or a stop; then say
    which happened. True when every board settled."""
    started = time.monotonic()
    watches = {board: BoardWatch() for board in boards}
    say("ladder: placing the bots (* = provisional: its 95% interval is still wider than 300 Elo; a board is"
        " settled when no bot is provisional and every two neighbours are told apart or both within 150 Elo)")
    current: list[dict[str, Any]] = []
    while True:
        elapsed = time.monotonic() - started
        current = read_boards(context, boards)
        for board in current:
            for line in watches[(board["game"], board["players"])].update(board, elapsed):
                say(line)
        if all(is_settled(b) for b in current) or should_stop() or elapsed >= timeout_s:
            break
        end = time.monotonic() + SHOW_EVERY_S
        while time.monotonic() < end and not should_stop():
            time.sleep(0.2)
    for line in outcome_lines(current, watches, time.monotonic() - started, should_stop()):
        say(line)
    return all(is_settled(b) for b in current)
