"""A leaderboard's match log as numpy arrays, and its pairwise tally without a Python loop per match.

Why: at 100,000 matches a list of ``MatchOutcome`` objects and the per-pair loop of ``bradley_terry.tally``
cost about a second before any fitting starts. Here a log is two M x k integer arrays (bot index per seat,
rank per seat) and every pair rule of ``outcomes`` is applied to whole columns at once: the seat pairs of a
k-player match are the k(k-1)/2 columns (a, b), a < b, and for each the score of seat a against seat b is

* ``ranked``: 1 if a's rank is better, 0 if worse, 0.5 if equal (every pair counts);
* ``one_loser``: 1 if a won (rank 1) and b did not, 0 the other way round; pairs of two winners or two
  non-winners carry no information and are masked out,

each pair weighing ``1 / (k - 1)``. This is the same rule, the same weights and the same counts as
``outcomes.seat_pairs`` and ``bradley_terry.tally`` (the tests hold them equal).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from arena.ratings.bradley_terry import canonical_order
from arena.ratings.outcomes import KINDS, ONE_LOSER, MatchOutcome, pair_weight

DENSE_IDS = 10_000_000


@dataclass(frozen=True, eq=False)
class PackedLog:
    """One leaderboard's finished matches: ``seats[m, s]`` indexes ``bots`` (canonical order), ``ranks[m, s]``
    is that seat's final rank (1 = best); every match has the same player count and ranking kind.
    ``deals[m]``: the deal of match m as a small integer (matches of one deal share it); ``None`` when every
    match is a deal of its own."""

    bots: tuple[Hashable, ...]
    seats: np.ndarray
    ranks: np.ndarray
    kind: str
    deals: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown ranking kind {self.kind!r}; expected one of {KINDS}")
        if self.seats.shape != self.ranks.shape or self.seats.ndim != 2 or self.seats.shape[1] < 2:
            raise ValueError("seats and ranks are matches x players arrays, at least two players")
        if self.matches and (self.ranks.min() < 1 or self.seats.min() < 0 or self.seats.max() >= len(self.bots)):
            raise ValueError("ranks are positive integers, 1 = best; seats index the bots")
        ordered = np.sort(self.seats, axis=1)
        if (ordered[:, 1:] == ordered[:, :-1]).any():
            raise ValueError("a bot cannot hold two seats of one rated match")
        if self.deals is not None and self.deals.shape != (self.matches,):
            raise ValueError("deals has one entry per match")

    @property
    def matches(self) -> int:
        return int(self.seats.shape[0])

    @property
    def players(self) -> int:
        return int(self.seats.shape[1])

    def outcomes(self) -> list[MatchOutcome]:
        """The log as ``MatchOutcome`` objects (for the exact path), in array order."""
        bots = self.bots
        deals = self.deals.tolist() if self.deals is not None else [None] * self.matches
        return [MatchOutcome(tuple(bots[i] for i in row), tuple(ranks), self.kind, deal)
                for row, ranks, deal in zip(self.seats.tolist(), self.ranks.tolist(), deals, strict=True)]


def pack(outcomes: Sequence[MatchOutcome]) -> PackedLog:
    """Arrays from outcome objects (one player count and kind, as one leaderboard has)."""
    if not outcomes:
        return PackedLog((), np.zeros((0, 2), dtype=np.int64), np.ones((0, 2), dtype=np.int64), "ranked")
    if len({(m.players, m.kind) for m in outcomes}) != 1:
        raise ValueError("one leaderboard is one game and one player count: mixed player counts or kinds")
    bots = tuple(canonical_order(bot for match in outcomes for bot in match.bots))
    index = {bot: i for i, bot in enumerate(bots)}
    seats = np.array([[index[bot] for bot in match.bots] for match in outcomes], dtype=np.int64)
    ranks = np.array([match.ranks for match in outcomes], dtype=np.int64)
    return PackedLog(bots, seats, ranks, outcomes[0].kind, deal_groups([match.deal for match in outcomes]))


def deal_groups(deals: Sequence[Hashable | None]) -> np.ndarray | None:
    """One small integer per match, shared by the matches of one deal (``None`` keys: a deal each);
    ``None`` when no two matches share a deal."""
    if all(deal is None for deal in deals):
        return None
    groups: dict[Hashable, int] = {}
    out = np.empty(len(deals), dtype=np.int64)
    for m, deal in enumerate(deals):
        key = ("match", m) if deal is None else ("deal", deal)
        out[m] = groups.setdefault(key, len(groups))
    return out if len(groups) < len(deals) else None


def from_ids(bot_ids: np.ndarray, ranks: np.ndarray, kind: str, deals: np.ndarray | None = None) -> PackedLog:
    """Arrays from integer bot ids per seat (what the arena stores): ids become indices into the sorted ids;
    ``deals``: one integer per match, equal for the matches of one deal (see ``PackedLog``)."""
    bot_ids = np.asarray(bot_ids, dtype=np.int64)
    if bot_ids.size and bot_ids.min() >= 0 and bot_ids.max() < DENSE_IDS:  # a lookup table beats sorting
        present = np.zeros(int(bot_ids.max()) + 1, dtype=bool)
        present[bot_ids] = True
        unique = np.flatnonzero(present)
        seats = (np.cumsum(present) - 1)[bot_ids]
    else:
        unique = np.unique(bot_ids)
        seats = np.searchsorted(unique, bot_ids).reshape(bot_ids.shape)
    if deals is not None:
        deals = np.asarray(deals, dtype=np.int64).ravel()
        if not _dense_labels(deals):  # labels 0..G-1 already (the arena's): unique would give them back
            deals = np.unique(deals, return_inverse=True)[1].ravel()
        deals = deals if deals.size and int(deals.max()) + 1 < len(deals) else None
    return PackedLog(tuple(unique.tolist()), seats, np.asarray(ranks, dtype=np.int64).reshape(bot_ids.shape), kind,
                     deals)


def _dense_labels(labels: np.ndarray) -> bool:
    """Whether every label is in 0..G-1 and each of them is used (one O(M) count instead of unique's sort
    or hash: 0.07 s of a refit at 94,000 matches)."""
    if not labels.size or labels.min() != 0 or labels.max() >= labels.size:
        return False
    return bool(np.bincount(labels).all())


@dataclass(frozen=True, eq=False)
class PairTally:
    """Every seat pair of every match as M x P columns, plus the sums a fit needs.

    ``first``/``second``: bot indices of seats a and b of each pair column; ``points``: a's score against b
    (1, 0.5, 0); ``mask``: whether the pair counts; ``weight``: 1 / (k - 1). ``score[i, j]``: weighted points
    i took from j; ``games``: matches played; ``wins``/``draws``/``losses``: pairwise and unweighted.
    """

    seat_a: np.ndarray
    seat_b: np.ndarray
    first: np.ndarray
    second: np.ndarray
    points: np.ndarray
    mask: np.ndarray
    weight: float
    score: np.ndarray
    games: np.ndarray
    wins: np.ndarray
    draws: np.ndarray
    losses: np.ndarray


def pair_tally(log: PackedLog) -> PairTally:
    """Apply the pair rule to whole columns and sum the score matrix by ``bincount`` (see the docstring)."""
    n, k = len(log.bots), log.players
    seat_a, seat_b = np.triu_indices(k, 1)
    rank_a, rank_b = log.ranks[:, seat_a], log.ranks[:, seat_b]
    if log.kind == ONE_LOSER:
        mask = (rank_a == 1) != (rank_b == 1)
        points = (rank_a == 1).astype(float)
    else:
        mask = np.ones(rank_a.shape, dtype=bool)
        points = 0.5 + 0.5 * np.sign(rank_b - rank_a)
    first, second = log.seats[:, seat_a], log.seats[:, seat_b]
    weight = pair_weight(k)
    cells = (first * n + second).astype(np.int32 if n * n < 2**31 else np.int64)
    counted = points if log.kind != ONE_LOSER else points[mask]
    if log.kind == ONE_LOSER:
        cells = cells[mask]
    taken = np.bincount(cells.ravel(), weights=weight * counted.ravel(), minlength=n * n).reshape(n, n)
    played = weight * np.bincount(cells.ravel(), minlength=n * n).reshape(n, n)
    score = taken + (played - taken).T  # a pair listed as (i, j) gives j the points i did not take
    won = np.zeros(log.seats.shape)
    drawn = np.zeros(log.seats.shape)
    lost = np.zeros(log.seats.shape)
    for column, (a, b) in enumerate(zip(seat_a.tolist(), seat_b.tolist(), strict=True)):
        counts, result = mask[:, column], points[:, column]
        win, draw, loss = counts & (result == 1.0), counts & (result == 0.5), counts & (result == 0.0)
        won[:, a] += win
        won[:, b] += loss
        lost[:, a] += loss
        lost[:, b] += win
        drawn[:, a] += draw
        drawn[:, b] += draw
    flat = log.seats.ravel()

    def per_bot(values: np.ndarray) -> np.ndarray:
        return np.bincount(flat, weights=values.ravel(), minlength=n).astype(np.int64)

    return PairTally(seat_a, seat_b, first, second, points, mask, weight, score,
                     np.bincount(flat, minlength=n), per_bot(won), per_bot(drawn), per_bot(lost))
