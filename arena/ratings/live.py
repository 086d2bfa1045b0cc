"""Live Elo: the classic incremental rating, updated the moment a match ends.

The Arena Elo table (``leaderboard``) is the rating of record; this one moves match by match so a bot's
author sees a number at once. Each match is broken into pairs by the same rule (``outcomes.seat_pairs``),
and each pair moves both bots by K / (k - 1) * (score - expected), expected = 1 / (1 + 10^((R_b - R_a) / 400)),
with every pair of the match judged on the ratings from before it (the order of seats does not matter). The
K / (k - 1) scaling makes one k-player match move a rating as much as one two-player game would. A bot is
provisional until it has played ``provisional_games`` matches.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass

from arena.ratings.outcomes import MatchOutcome, seat_pairs

DEFAULT_K = 32.0
START = 1500.0
DEFAULT_PROVISIONAL_GAMES = 10


@dataclass(frozen=True, slots=True)
class LiveRating:
    """A bot's live rating, matches played, and whether it is still provisional."""

    bot: Hashable
    rating: float
    games: int
    provisional: bool


def expected_score(rating: float, opponent: float) -> float:
    """The Elo expectation of ``rating`` against ``opponent``: 0.5 when equal, 10:1 odds at +400."""
    return 1.0 / (1.0 + 10.0 ** ((opponent - rating) / 400.0))


class LiveElo:
    """Incremental pairwise Elo over a stream of matches (state lives in the instance only)."""

    def __init__(
        self, k: float = DEFAULT_K, start: float = START, provisional_games: int = DEFAULT_PROVISIONAL_GAMES
    ) -> None:
        if k <= 0 or provisional_games < 0:
            raise ValueError("k must be positive and provisional_games non-negative")
        self.k = k
        self.start = start
        self.provisional_games = provisional_games
        self._ratings: dict[Hashable, float] = {}
        self._games: dict[Hashable, int] = {}

    def load(self, ratings: Mapping[Hashable, tuple[float, int]]) -> None:
        """Resume from stored state: ``{bot: (rating, games)}`` (the arena keeps live ratings in its database)."""
        for bot, (rating, games) in ratings.items():
            self._ratings[bot] = float(rating)
            self._games[bot] = int(games)

    def rating(self, bot: Hashable) -> float:
        return self._ratings.get(bot, self.start)

    def games(self, bot: Hashable) -> int:
        return self._games.get(bot, 0)

    def is_provisional(self, bot: Hashable) -> bool:
        return self.games(bot) < self.provisional_games

    def update(self, outcome: MatchOutcome) -> dict[Hashable, float]:
        """Apply one match; returns each seated bot's rating change (all pairs use the pre-match ratings)."""
        before = [self.rating(bot) for bot in outcome.bots]
        scale = self.k / (outcome.players - 1)
        change = [0.0] * outcome.players
        for a, b, score in seat_pairs(outcome):
            delta = scale * (score - expected_score(before[a], before[b]))
            change[a] += delta
            change[b] -= delta
        for seat, bot in enumerate(outcome.bots):
            self._ratings[bot] = before[seat] + change[seat]
            self._games[bot] = self.games(bot) + 1
        return dict(zip(outcome.bots, change, strict=True))

    def table(self) -> list[LiveRating]:
        """Every bot seen so far, best first (ties by bot id's repr for a stable order)."""
        bots = sorted(self._ratings, key=lambda bot: (-self._ratings[bot], repr(bot)))
        return [LiveRating(bot, self._ratings[bot], self._games[bot], self.is_provisional(bot)) for bot in bots]
