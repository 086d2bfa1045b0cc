"""How much better the heuristic sample bot plays than the random one, measured in process.

    python -m bench.bots_strength [--matches N] [--piranha-matches M] [--games NAME ...]

One heuristic seat, every other seat random; the heuristic's seat turns round the table from match
to match. Each match is replayed with the same seed and a random player in that seat: that seat's
results there are the random baseline (so shared placings, as in Piranha Pedro where only the one
who falls out loses, count alike on both sides). The strategies are called directly on the request
a bot would get (view, decision, legal actions, game); no HTTP.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from referee.games import GAMES
from sample_bots.heuristic_bot import STRATEGIES

Strategy = Callable[[dict[str, Any], random.Random], Any]

PLAYER_COUNTS = {
    "pajarracos": (3, 4, 6),
    "piranha-pedro": (2, 4, 6),
    "piranha-pedro-ko": (2, 4, 6),
    "piranha-pedro-ko-advanced": (2, 4, 6),
}


def play(name: str, players: int, seed: int, seat: int, strategy: Strategy | None,
         times: list[float] | None = None) -> list[int]:
    """The ranks of one seeded match: ``strategy`` (None: random) in ``seat``, random elsewhere.
    The strategy's seconds per decision are appended to ``times``."""
    game = GAMES[name]
    rngs = [random.Random(seed * 7 + s) for s in range(players)]
    state = game.initial_state(players, seed)
    while not game.is_terminal(state):
        actions = {}
        for s in sorted(game.to_act(state)):
            legal = game.legal_actions(state, s)
            if s == seat and strategy is not None:
                request = {"game": name, "view": game.view(state, s), "decision": game.decision(state, s),
                           "legal_actions": legal}
                start = time.perf_counter()
                actions[s] = strategy(request, rngs[s])
                if times is not None:
                    times.append(time.perf_counter() - start)
            else:
                actions[s] = rngs[s].choice(legal)
        state = game.apply(state, actions)
    return game.result(state)["ranks"]


@dataclass
class Row:
    """One game and player count: the heuristic seat's results and the random baseline's."""

    game: str
    players: int
    matches: int = 0
    wins: int = 0
    ranks: int = 0
    base_wins: int = 0
    base_ranks: int = 0
    times: list[float] = field(default_factory=list)

    @property
    def win_rate(self) -> float:
        return self.wins / self.matches

    @property
    def base_win_rate(self) -> float:
        return self.base_wins / self.matches

    @property
    def ratio(self) -> float:
        return self.win_rate / self.base_win_rate if self.base_wins else float("inf")


def measure(name: str, players: int, matches: int, first_seed: int = 1, baseline: bool = True) -> Row:
    """``matches`` seeded matches of the heuristic against random players (and, with ``baseline``,
    the same matches with a random player in the heuristic's seat)."""
    row = Row(name, players)
    strategy = STRATEGIES[name]
    for i in range(matches):
        seed, seat = first_seed + i, i % players
        rank = play(name, players, seed, seat, strategy, row.times)[seat]
        row.matches += 1
        row.wins += rank == 1
        row.ranks += rank
        if baseline:
            base = play(name, players, seed, seat, None)[seat]
            row.base_wins += base == 1
            row.base_ranks += base
    return row


def _format(row: Row) -> str:
    times = sorted(row.times) or [0.0]
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    return (f"| {row.game} | {row.players} | {row.matches} | {row.win_rate:.0%} | {row.base_win_rate:.0%} | "
            f"{row.ratio:.2f} | {row.ranks / row.matches:.2f} | {row.base_ranks / row.matches:.2f} | "
            f"{statistics.fmean(times) * 1e3:.1f} / {p99 * 1e3:.1f} / {times[-1] * 1e3:.0f} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--matches", type=int, default=300, help="matches per Pajarracos player count")
    parser.add_argument("--piranha-matches", type=int, default=100,
                        help="matches per Piranha Pedro game and player count (its strategy is Monte Carlo)")
    parser.add_argument("--games", nargs="*", default=sorted(PLAYER_COUNTS))
    args = parser.parse_args(argv)
    print("| game | players | matches | heuristic wins | random wins | ratio | heuristic mean rank "
          "| random mean rank | heuristic ms per decision (mean / p99 / max) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    started = time.perf_counter()
    for name in args.games:
        matches = args.matches if name == "pajarracos" else args.piranha_matches
        for players in PLAYER_COUNTS[name]:
            print(_format(measure(name, players, matches)), flush=True)
    print(f"\n{time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
