"""Match outcomes as ratings see them, and the pairwise results a multiplayer match stands for.

Every rating model here is pairwise (Bradley-Terry for the arena table, classic Elo for the live one), so a
k-player result is broken into pairs first, by one rule shared by both models:

* ``"ranked"`` games: every pair of seats, the better rank wins, equal ranks are a draw (half a win each).
* ``"one_loser"`` games (Piranha Pedro basic): only pairs of a winner (rank 1) and a non-winner. Two winners
  did not beat each other, and two seats at the bottom (possible after forfeits) did not either, so those
  pairs carry no information and are skipped rather than counted as draws.

Each pair of a k-player match weighs ``1 / (k - 1)``: a seat is in k - 1 pairs of a ranked match, so the
match counts like one game for every player whatever k is. Pairs from one deal share its luck and are not
independent; down-weighting keeps a 6-player match from counting as five games for each player.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

RANKED = "ranked"
ONE_LOSER = "one_loser"
KINDS = (RANKED, ONE_LOSER)


@dataclass(frozen=True, slots=True)
class MatchOutcome:
    """One finished match: the bots in seat order, their final ranks (1 = best, shared = tie), the ranking kind,
    and its deal: matches with the same ``deal`` (e.g. the seat rotations of one duplicate deal) share their
    luck, so the leaderboard's intervals count them as one unit (``None``: a deal of its own)."""

    bots: tuple[Hashable, ...]
    ranks: tuple[int, ...]
    kind: str = RANKED
    deal: Hashable | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "bots", tuple(self.bots))
        object.__setattr__(self, "ranks", tuple(self.ranks))
        if self.kind not in KINDS:
            raise ValueError(f"unknown ranking kind {self.kind!r}; expected one of {KINDS}")
        if len(self.bots) < 2 or len(self.bots) != len(self.ranks):
            raise ValueError("a match needs at least two seats and one rank per seat")
        if len(set(self.bots)) != len(self.bots):
            raise ValueError("a bot cannot hold two seats of one rated match")
        if any(not isinstance(rank, int) or rank < 1 for rank in self.ranks):
            raise ValueError("ranks are positive integers, 1 = best")

    @classmethod
    def from_result(cls, bots: Sequence[Hashable], result: Mapping[str, Any], kind: str,
                    deal: Hashable | None = None) -> MatchOutcome:
        """Build from the stored result (its ``ranks`` already put forfeited seats at the bottom)."""
        return cls(tuple(bots), tuple(int(rank) for rank in result["ranks"]), kind, deal)

    @property
    def players(self) -> int:
        return len(self.bots)


@dataclass(frozen=True, slots=True)
class Pair:
    """One pairwise result: ``first`` scored ``score`` (1 = win, 0.5 = draw) against ``second``."""

    first: Hashable
    second: Hashable
    score: float
    weight: float


def pair_weight(players: int) -> float:
    """The weight of each pair of a ``players``-seat match: one game per player per match."""
    return 1.0 / (players - 1)


def seat_pairs(outcome: MatchOutcome) -> list[tuple[int, int, float]]:
    """Seat-index pairs ``(first, second, score of first)``; the winner is first, draws keep seat order."""
    return rank_pairs(outcome.ranks, outcome.kind)


def rank_pairs(ranks: Sequence[int], kind: str) -> list[tuple[int, int, float]]:
    """``seat_pairs`` for plain ranks (callers that tally many matches skip building outcome objects)."""
    seats = range(len(ranks))
    if kind == ONE_LOSER:
        return [(a, b, 1.0) for a in seats if ranks[a] == 1 for b in seats if ranks[b] != 1]
    out = []
    for a in seats:
        for b in range(a + 1, len(ranks)):
            if ranks[a] < ranks[b]:
                out.append((a, b, 1.0))
            elif ranks[a] > ranks[b]:
                out.append((b, a, 1.0))
            else:
                out.append((a, b, 0.5))
    return out


def pairs(outcome: MatchOutcome) -> list[Pair]:
    """The pairwise results a match stands for, each weighted ``1 / (k - 1)`` (see the module docstring)."""
    weight = pair_weight(outcome.players)
    bots = outcome.bots
    return [Pair(bots[a], bots[b], score, weight) for a, b, score in seat_pairs(outcome)]
