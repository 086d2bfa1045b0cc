"""One leaderboard (one game, one player count): Arena Elo with bootstrap intervals, rank ranges and LOS.

* ``elo``: the Bradley-Terry fit of the whole log (``bradley_terry``), pool mean 1500.
* ``elo_low``/``elo_high``: percentile bootstrap interval (default 95 %): whole matches resampled with
  replacement, refitted, the 2.5th and 97.5th percentiles (linear interpolation between order statistics).
* ``rank``: competition rank by ``elo`` (equal Elo share the better rank).
* ``rank_low``..``rank_high``: the ranks the bot could hold given the intervals. Bots whose interval lies
  wholly above its own are surely ahead, bots whose interval lies wholly below surely behind:
  ``rank_low = 1 + #{j : elo_low_j > elo_high_i}``, ``rank_high = #{j : elo_high_j >= elo_low_i}`` (which
  counts the bot itself). Touching intervals count as overlapping. Both are clamped to include ``rank``
  (a skewed bootstrap can, rarely, leave the point estimate outside its own percentile interval).
* ``los_next``: likelihood of superiority over the next bot in the table, P(elo_i > elo_next), by the normal
  approximation Phi(d / sd) with d the fitted difference and sd the bootstrap standard deviation of that
  difference (so the correlation of the two ratings is accounted for). A plain bootstrap vote count would
  saturate at 0 or 1 after 200 resamples; the normal form keeps small differences in the tail visible.
* ``games`` (matches played) and ``wins``/``draws``/``losses`` (pairwise, unweighted).
"""

from __future__ import annotations

import math
import random
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

from arena.ratings.bootstrap import bootstrap_logits
from arena.ratings.bradley_terry import DEFAULT_PRIOR_SD, fit_logits, precision_for, tally, to_elo
from arena.ratings.outcomes import MatchOutcome

DEFAULT_RESAMPLES = 200


@dataclass(frozen=True, slots=True)
class LeaderboardRow:
    """One bot's line of the table (see the module docstring for every field)."""

    bot: Hashable
    rank: int
    rank_low: int
    rank_high: int
    elo: float
    elo_low: float
    elo_high: float
    games: int
    wins: int
    draws: int
    losses: int
    los_next: float | None


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The q-quantile (0..1) of sorted values, linear between order statistics (numpy's default)."""
    position = q * (len(sorted_values) - 1)
    low = math.floor(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (position - low) * (sorted_values[high] - sorted_values[low])


def competition_ranks(values: Sequence[float]) -> list[int]:
    """1 + the number of strictly larger values: the best is 1, ties share the better rank."""
    return [1 + sum(1 for other in values if other > mine) for mine in values]


def rank_ranges(low: Sequence[float], high: Sequence[float]) -> list[tuple[int, int]]:
    """(best, worst) possible rank of every bot from interval overlaps (see the module docstring)."""
    return [
        (1 + sum(1 for other in low if other > high[i]), sum(1 for other in high if other >= low[i]))
        for i in range(len(low))
    ]


def likelihood_of_superiority(difference: float, differences: Sequence[float]) -> float:
    """P(first > second) ~ Phi(difference / bootstrap sd of the difference)."""
    count = len(differences)
    mean = sum(differences) / count
    var = sum((d - mean) ** 2 for d in differences) / (count - 1) if count > 1 else 0.0
    if var <= 0.0:
        return 1.0 if difference > 0 else 0.0 if difference < 0 else 0.5
    return 0.5 * math.erfc(-difference / math.sqrt(2.0 * var))


def canonical_log(matches: Iterable[MatchOutcome]) -> list[MatchOutcome]:
    """The log in a fixed order, so the bootstrap (not only the fit) is independent of the order given."""
    return sorted(matches, key=lambda m: (m.kind, m.ranks, tuple(map(repr, m.bots))))


def leaderboard(
    matches: Iterable[MatchOutcome],
    *,
    rng: random.Random,
    resamples: int = DEFAULT_RESAMPLES,
    prior_sd: float | None = DEFAULT_PRIOR_SD,
    confidence: float = 0.95,
) -> list[LeaderboardRow]:
    """The table for one leaderboard, best first; ``rng`` (seeded by the caller) drives the bootstrap."""
    log = canonical_log(matches)
    if not log:
        return []
    if len({(m.players, m.kind) for m in log}) != 1:
        raise ValueError("one leaderboard is one game and one player count: mixed player counts or kinds")
    if not 0.0 < confidence < 1.0 or resamples < 0:
        raise ValueError("confidence must be in (0, 1) and resamples >= 0")
    counts = tally(log)
    precision = precision_for(prior_sd)
    main = fit_logits(counts.score, precision)
    elo = to_elo(main)
    n = len(elo)
    if resamples:
        samples = [to_elo(s) for s in bootstrap_logits(counts, main, precision, rng, resamples).tolist()]
        columns = [sorted(column) for column in zip(*samples, strict=True)]
        tail = (1.0 - confidence) / 2.0
        low = [percentile(column, tail) for column in columns]
        high = [percentile(column, 1.0 - tail) for column in columns]
    else:
        samples, low, high = [], list(elo), list(elo)
    ranks = competition_ranks(elo)
    ranges = rank_ranges(low, high)
    order = sorted(range(n), key=lambda i: (ranks[i], i))
    rows = []
    for place, i in enumerate(order):
        los = None
        if samples and place + 1 < n:
            j = order[place + 1]
            los = likelihood_of_superiority(elo[i] - elo[j], [s[i] - s[j] for s in samples])
        rows.append(
            LeaderboardRow(
                bot=counts.bots[i],
                rank=ranks[i],
                rank_low=min(ranges[i][0], ranks[i]),
                rank_high=max(ranges[i][1], ranks[i]),
                elo=elo[i],
                elo_low=low[i],
                elo_high=high[i],
                games=counts.games[i],
                wins=counts.wins[i],
                draws=counts.draws[i],
                losses=counts.losses[i],
                los_next=los,
            )
        )
    return rows
