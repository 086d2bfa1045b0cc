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

Two paths compute these fields (``method="auto"`` picks by size):

* exact, for up to ``EXACT_MAX_BOTS`` (64) bots and ``EXACT_MAX_PAIRS`` (60,000) seat pairs, i.e. 10,000
  four-player matches: the pure-Python fit and every bootstrap resample refitted to convergence
  (``bootstrap``). These leaderboards get exactly the table they always had. Its cost grows as pairs
  (tally, resample sums) plus resamples x bots^3 (refits): at the limits about 0.5-0.9 s here, 8 s at 200
  bots and 20,000 matches, minutes at 1,000 bots.
* one-step, above either limit (and on request): the same posterior's optimum by numpy Newton (``dense``,
  warm-started at ``start``; equal to the exact fit to 1e-6 Elo) and the one-step bootstrap, the one
  approximation: each resample is the linearised refit from the fit, drawn from the Gaussian that the sum
  of per-match gradient terms tends to (see ``dense``). Interval endpoints differ from the exact
  bootstrap's by about as much as two exact runs with different seeds differ from each other (150 bots,
  10,000 matches: median 3 Elo, 95th percentile 10 Elo of 300 endpoints); what it cannot show is the skew
  of the exact intervals of bots that win or lose nearly everything (timings: docs/benchmarks.md).
  Without a prior only the exact path exists (the one-step path needs the prior).

Both paths run numpy's linear algebra on one thread (``blas``).
"""

from __future__ import annotations

import math
import random
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from arena.ratings import dense
from arena.ratings.blas import single_thread
from arena.ratings.bootstrap import bootstrap_logits
from arena.ratings.bradley_terry import (
    BASE_ELO,
    DEFAULT_PRIOR_SD,
    ELO_PER_LOGIT,
    fit_logits,
    precision_for,
    tally,
    to_elo,
)
from arena.ratings.outcomes import MatchOutcome
from arena.ratings.packed import PackedLog, pack, pair_tally

DEFAULT_RESAMPLES = 200
AUTO, EXACT, ONE_STEP = "auto", "exact", "one_step"
METHODS = (AUTO, EXACT, ONE_STEP)
EXACT_MAX_BOTS = 64
EXACT_MAX_PAIRS = 60_000  # matches x k(k-1)/2: 10,000 four-player matches


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


@single_thread()
def exact_leaderboard(
    matches: Iterable[MatchOutcome], rng: random.Random, resamples: int, prior_sd: float | None, confidence: float
) -> list[LeaderboardRow]:
    """The exact path: pure-Python fit, every bootstrap resample refitted to convergence."""
    log = canonical_log(matches)
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


@single_thread()
def one_step_leaderboard(
    log: PackedLog, rng: random.Random, resamples: int, prior_sd: float | None, confidence: float,
    start: Mapping[Hashable, float] | None = None,
) -> list[LeaderboardRow]:
    """The scalable path: numpy Newton fit (warm-started at ``start``, Elo by bot) and the one-step bootstrap
    (``dense``); the same table fields, computed on arrays."""
    pairs = pair_tally(log)
    precision = precision_for(prior_sd)
    gen = np.random.default_rng(rng.getrandbits(128))
    r, samples = dense.fit(log, pairs, precision, dense.start_logits(log.bots, start), gen, resamples)
    elo = BASE_ELO + ELO_PER_LOGIT * r
    n = len(elo)
    if resamples:
        draws = BASE_ELO + ELO_PER_LOGIT * samples
        tail = (1.0 - confidence) / 2.0
        low, high = np.quantile(draws, [tail, 1.0 - tail], axis=0)
    else:
        low, high = elo.copy(), elo.copy()
    ranks = 1 + n - np.searchsorted(np.sort(elo), elo, side="right")
    rank_low = np.minimum(1 + n - np.searchsorted(np.sort(low), high, side="right"), ranks)
    rank_high = np.maximum(n - np.searchsorted(np.sort(high), low, side="left"), ranks)
    order = np.lexsort((np.arange(n), ranks)).tolist()
    los: list[float | None] = [None] * n
    if resamples:
        gaps = draws[:, order[:-1]] - draws[:, order[1:]]
        variances = gaps.var(axis=0, ddof=1) if resamples > 1 else np.zeros(n - 1)
        differences = elo[order[:-1]] - elo[order[1:]]
        los[:-1] = [normal_los(d, v) for d, v in zip(differences.tolist(), variances.tolist(), strict=True)]
    columns = (ranks, rank_low, rank_high, elo, low, high, pairs.games, pairs.wins, pairs.draws, pairs.losses)
    values = [column.tolist() for column in columns]
    return [
        LeaderboardRow(log.bots[i], *(column[i] for column in values[:6]), *(column[i] for column in values[6:]),
                       los_next=los[place])
        for place, i in enumerate(order)
    ]


def normal_los(difference: float, variance: float) -> float:
    """Phi(difference / sd) from the difference's bootstrap variance (``likelihood_of_superiority``'s rule)."""
    if variance <= 0.0:
        return 1.0 if difference > 0 else 0.0 if difference < 0 else 0.5
    return 0.5 * math.erfc(-difference / math.sqrt(2.0 * variance))


def packed_leaderboard(
    log: PackedLog,
    *,
    rng: random.Random,
    resamples: int = DEFAULT_RESAMPLES,
    prior_sd: float | None = DEFAULT_PRIOR_SD,
    confidence: float = 0.95,
    start: Mapping[Hashable, float] | None = None,
    method: str = AUTO,
) -> list[LeaderboardRow]:
    """The table of a log given as arrays (what the arena reads): small logs take the exact path on their
    outcomes, so they get exactly the table ``leaderboard`` gives them."""
    if not log.matches:
        return []
    _check(confidence, resamples, method)
    if use_exact(len(log.bots), log.matches * math.comb(log.players, 2), prior_sd, method):
        return exact_leaderboard(log.outcomes(), rng, resamples, prior_sd, confidence)
    return one_step_leaderboard(log, rng, resamples, prior_sd, confidence, start)


def leaderboard(
    matches: Iterable[MatchOutcome],
    *,
    rng: random.Random,
    resamples: int = DEFAULT_RESAMPLES,
    prior_sd: float | None = DEFAULT_PRIOR_SD,
    confidence: float = 0.95,
    start: Mapping[Hashable, float] | None = None,
    method: str = AUTO,
) -> list[LeaderboardRow]:
    """The table for one leaderboard, best first; ``rng`` (seeded by the caller) drives the bootstrap.

    ``method``: ``"exact"``, ``"one_step"`` or ``"auto"`` (exact up to ``EXACT_MAX_BOTS`` bots and
    ``EXACT_MAX_PAIRS`` seat pairs, and always without a prior). ``start``: stored Elo by bot, a warm start
    for the one-step path's Newton fit (the result does not depend on it beyond 1e-6 Elo)."""
    log = list(matches)
    if not log:
        return []
    if len({(m.players, m.kind) for m in log}) != 1:
        raise ValueError("one leaderboard is one game and one player count: mixed player counts or kinds")
    _check(confidence, resamples, method)
    bots = len({bot for match in log for bot in match.bots})
    if use_exact(bots, len(log) * math.comb(log[0].players, 2), prior_sd, method):
        return exact_leaderboard(log, rng, resamples, prior_sd, confidence)
    return one_step_leaderboard(pack(log), rng, resamples, prior_sd, confidence, start)


def use_exact(bots: int, pairs: int, prior_sd: float | None, method: str) -> bool:
    """Which path a leaderboard of ``bots`` bots and ``pairs`` seat pairs takes (see the module docstring)."""
    if method != AUTO:
        return method == EXACT
    return prior_sd is None or (bots <= EXACT_MAX_BOTS and pairs <= EXACT_MAX_PAIRS)


def _check(confidence: float, resamples: int, method: str) -> None:
    if not 0.0 < confidence < 1.0 or resamples < 0:
        raise ValueError("confidence must be in (0, 1) and resamples >= 0")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}")
