"""One leaderboard (one game, one player count): Arena Elo with posterior intervals, rank ranges and LOS.

* ``elo``: the mode of the Bradley-Terry posterior of the whole log, the prior's spread fitted to the board
  (``posterior``), the pool's reference at 1500 (``reference``: the mean weighted by each bot's Fisher
  information, which a newcomer barely moves); a group of bots that never met the others by any chain of
  matches has its own reference at 1500 (``groups``: the data say nothing of its offset).
* ``elo_low``/``elo_high``: the 95 % (``confidence``) interval of the bot's strength relative to the
  reference of its group (the pool, on a connected board): the Laplace approximation of the posterior,
  deals counted as units (``posterior``). It covers the true strength about 95 % of the time for bots with
  1, 2, 5, 20 or 100 matches alike (bench.ratings).
* ``rank``: competition rank by ``elo`` (equal Elo share the better rank).
* ``rank_low``..``rank_high``: the 2.5th..97.5th percentile of the bot's rank over joint posterior draws
  (``resamples`` of them), clamped to include ``rank``; within its group, the bots of other groups counted
  as possibly above or below it (``groups.rank_ranges``).
* ``los_next``: likelihood of superiority over the next bot in the table, Phi(d / sd) with d the fitted
  difference and sd the posterior sd of that difference (correlations included); None for the last bot and
  where the next bot is of another group (no comparison).
* ``games`` (matches played) and ``wins``/``draws``/``losses`` (pairwise, unweighted).
* ``provisional`` (a property): the interval is still too wide to call the rating settled (``provisional``).

Two paths compute the same posterior (``method="auto"`` picks by size):

* exact, up to ``EXACT_MAX_BOTS`` (64) bots and ``EXACT_MAX_PAIRS`` (60,000) seat pairs: the log in a
  canonical order, Newton with exact solves from a cold start, so the table depends on nothing but the log
  and the seed;
* large-board (``"one_step"``, the name it had when it was a one-step bootstrap): Newton steps by conjugate
  gradients warm-started at ``start`` (the stored ratings), the same optimum to 1e-6 Elo.

Both run numpy's linear algebra on one thread (``blas``).
"""

from __future__ import annotations

import math
import random
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from arena.ratings import dense, groups, posterior
from arena.ratings.blas import single_thread
from arena.ratings.bradley_terry import BASE_ELO, ELO_PER_LOGIT
from arena.ratings.outcomes import MatchOutcome
from arena.ratings.packed import PackedLog, pack, pair_tally
from arena.ratings.provisional import is_provisional

DEFAULT_RESAMPLES = 400  # posterior draws for the rank ranges
TIE_ELO = 1e-4  # ratings closer than this are equal: far below any shown digit, far above the fit's rounding
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

    @property
    def provisional(self) -> bool:
        """Whether the interval is still too wide to call the rating settled (``provisional``)."""
        return is_provisional(self.elo_low, self.elo_high)


def canonical_log(matches: Iterable[MatchOutcome]) -> list[MatchOutcome]:
    """The log in a fixed order, so the table (not only the fit) is independent of the order given."""
    return sorted(matches, key=lambda m: (m.kind, m.ranks, tuple(map(repr, m.bots)), repr(m.deal)))


@single_thread()
def exact_leaderboard(
    matches: Iterable[MatchOutcome], rng: random.Random, resamples: int, prior_sd: float | None, confidence: float
) -> list[LeaderboardRow]:
    """The exact path: the log in canonical order, the posterior by exact Newton solves from a cold start."""
    log = pack(canonical_log(matches))
    return posterior_table(log, rng, resamples, prior_sd, confidence, np.zeros(len(log.bots)), exact=True)[0]


@single_thread()
def one_step_leaderboard(
    log: PackedLog, rng: random.Random, resamples: int, prior_sd: float | None, confidence: float,
    start: Mapping[Hashable, float] | None = None, spreads: tuple[float, float] | None = None,
) -> tuple[list[LeaderboardRow], tuple[float, float] | None]:
    """The large-board path: the same posterior, Newton by conjugate gradients warm-started at ``start``, the
    prior's spread searched from ``spreads`` (``posterior.fit``); also returns the spreads it found."""
    return posterior_table(log, rng, resamples, prior_sd, confidence, dense.start_logits(log.bots, start),
                           exact=False, spreads=spreads)


def posterior_table(log: PackedLog, rng: random.Random, resamples: int, prior_sd: float | None,
                    confidence: float, start: np.ndarray, *, exact: bool, spreads: tuple[float, float] | None = None,
                    ) -> tuple[list[LeaderboardRow], tuple[float, float] | None]:
    """Every field of the table from the board's posterior (see the module docstring), and the prior's
    fitted spreads (``posterior.Posterior.spreads``)."""
    pairs = pair_tally(log)
    fitted = posterior.fit(log, pairs, start, prior_sd=prior_sd, exact=exact, spreads=spreads)
    elo = BASE_ELO + ELO_PER_LOGIT * fitted.mode
    n = len(elo)
    ranks = competition_ranks(elo)
    order = np.lexsort((np.arange(n), ranks)).tolist()
    los: list[float | None] = [None] * n
    if resamples:
        low_logit, high_logit = fitted.intervals(confidence)
        low, high = BASE_ELO + ELO_PER_LOGIT * low_logit, BASE_ELO + ELO_PER_LOGIT * high_logit
        gen = np.random.default_rng(rng.getrandbits(128))
        draws = fitted.draws(gen, resamples)
        rank_low, rank_high = groups.rank_ranges(draws, fitted.group, (1.0 - confidence) / 2.0)
        rank_low, rank_high = np.minimum(rank_low, ranks), np.maximum(rank_high, ranks)
        if n > 1:
            first, second = np.array(order[:-1]), np.array(order[1:])
            variances = fitted.difference_variance(first, second) * ELO_PER_LOGIT**2
            los[:-1] = [normal_los(d, v) if together else None for d, v, together in zip(
                (elo[first] - elo[second]).tolist(), variances.tolist(),
                (fitted.group[first] == fitted.group[second]).tolist(), strict=True)]
    else:
        low, high, rank_low, rank_high = elo.copy(), elo.copy(), ranks.copy(), ranks.copy()
    columns = (ranks, rank_low, rank_high, elo, low, high, pairs.games, pairs.wins, pairs.draws, pairs.losses)
    values = [column.tolist() for column in columns]
    return [
        LeaderboardRow(log.bots[i], *(column[i] for column in values[:6]), *(column[i] for column in values[6:]),
                       los_next=los[place])
        for place, i in enumerate(order)
    ], fitted.spreads


def competition_ranks(elo: np.ndarray, tie_elo: float = TIE_ELO) -> np.ndarray:
    """1-based ranks, best first, bots within ``tie_elo`` of the one above sharing its rank ("1, 1, 3").

    Bots with the same record against the same opponents have the same rating in exact arithmetic, but the
    fit's last bits depend on its path (warm-started refit or fresh fit), and ranking on exact equality gave
    one path "1, 1, 1" and the other "1, 2, 3" for the same matches (the chaos test's stored leaderboard
    against a fresh fit of its log)."""
    order = np.argsort(-elo, kind="stable")
    ordered = elo[order]
    starts = np.ones(len(elo), dtype=bool)
    starts[1:] = (ordered[:-1] - ordered[1:]) > tie_elo
    group_rank = np.maximum.accumulate(np.where(starts, np.arange(len(elo)), 0)) + 1
    ranks = np.empty(len(elo), dtype=np.int64)
    ranks[order] = group_rank
    return ranks


def normal_los(difference: float, variance: float) -> float:
    """Phi(difference / sd) from the difference's posterior variance ."""
    if variance <= 0.0:
        return 1.0 if difference > 0 else 0.0 if difference < 0 else 0.5
    return 0.5 * math.erfc(-difference / math.sqrt(2.0 * variance))


def packed_leaderboard(
    log: PackedLog,
    *,
    rng: random.Random,
    resamples: int = DEFAULT_RESAMPLES,
    prior_sd: float | None = None,
    confidence: float = 0.95,
    start: Mapping[Hashable, float] | None = None,
    method: str = AUTO,
) -> list[LeaderboardRow]:
    """The table of a log given as arrays (what the arena reads): small logs take the exact path on their
    outcomes, so they get exactly the table ``leaderboard`` gives them."""
    return refit_leaderboard(log, rng=rng, resamples=resamples, prior_sd=prior_sd, confidence=confidence,
                             start=start, method=method)[0]


def refit_leaderboard(
    log: PackedLog,
    *,
    rng: random.Random,
    resamples: int = DEFAULT_RESAMPLES,
    prior_sd: float | None = None,
    confidence: float = 0.95,
    start: Mapping[Hashable, float] | None = None,
    method: str = AUTO,
    spreads: tuple[float, float] | None = None,
) -> tuple[list[LeaderboardRow], tuple[float, float] | None]:
    """``packed_leaderboard`` for a refit that kept the last fit's spreads: the large path searches the
    prior's spread from ``spreads`` and returns the spreads it found, to keep for the next refit (the exact
    path, whose table depends on nothing but the log, ignores them and returns None)."""
    if not log.matches:
        return [], None
    _check(confidence, resamples, method, prior_sd)
    if use_exact(len(log.bots), log.matches * math.comb(log.players, 2), method):
        return exact_leaderboard(log.outcomes(), rng, resamples, prior_sd, confidence), None
    return one_step_leaderboard(log, rng, resamples, prior_sd, confidence, start, spreads)


def leaderboard(
    matches: Iterable[MatchOutcome],
    *,
    rng: random.Random,
    resamples: int = DEFAULT_RESAMPLES,
    prior_sd: float | None = None,
    confidence: float = 0.95,
    start: Mapping[Hashable, float] | None = None,
    method: str = AUTO,
) -> list[LeaderboardRow]:
    """The table for one leaderboard, best first; ``rng`` (seeded by the caller) drives the posterior draws
    (``resamples`` of them: rank ranges; 0 = point estimates only).

    ``prior_sd``: the prior's spread in Elo, fitted to the board when ``None`` (the default; see
    ``posterior``). ``method``: ``"exact"``, ``"one_step"`` (large-board) or ``"auto"`` (exact up to
    ``EXACT_MAX_BOTS`` bots and ``EXACT_MAX_PAIRS`` seat pairs). ``start``: stored Elo by bot, a warm start
    for the large-board path's Newton fit (the result does not depend on it beyond 1e-6 Elo). A match's
    ``deal`` groups the matches whose luck is shared."""
    log = list(matches)
    if not log:
        return []
    if len({(m.players, m.kind) for m in log}) != 1:
        raise ValueError("one leaderboard is one game and one player count: mixed player counts or kinds")
    _check(confidence, resamples, method, prior_sd)
    bots = len({bot for match in log for bot in match.bots})
    if use_exact(bots, len(log) * math.comb(log[0].players, 2), method):
        return exact_leaderboard(log, rng, resamples, prior_sd, confidence)
    return one_step_leaderboard(pack(log), rng, resamples, prior_sd, confidence, start)[0]


def use_exact(bots: int, pairs: int, method: str) -> bool:
    """Which path a leaderboard of ``bots`` bots and ``pairs`` seat pairs takes (see the module docstring)."""
    if method != AUTO:
        return method == EXACT
    return bots <= EXACT_MAX_BOTS and pairs <= EXACT_MAX_PAIRS


def _check(confidence: float, resamples: int, method: str, prior_sd: float | None) -> None:
    if not 0.0 < confidence < 1.0 or resamples < 0:
        raise ValueError("confidence must be in (0, 1) and resamples >= 0")
    if prior_sd is not None and prior_sd <= 0:
        raise ValueError("prior_sd must be positive (or None: fitted to the board)")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}")
