"""Batch Bradley-Terry fit over a whole match log, on the Elo scale: the arena's rating of record.

Model: bot i beats bot j with probability sigma(r_i - r_j), r in logits; Elo = 1500 + r * 400 / ln 10, so a
400-point gap means 10:1 odds. The log enters through its pairwise results (see ``outcomes``), summed into a
score matrix ``score[i][j]`` = weighted points i took from j (a draw gives each side half the pair weight).

Prior: independent Gaussians r_i ~ N(0, tau^2), tau = ``prior_sd`` Elo (default 400). It keeps an unbeaten or
winless bot finite, and it anchors the pool: at the optimum the log-likelihood gradient sums to zero over the
bots (every pair's terms cancel), so the prior's gradient -sum(r_i) / tau^2 must vanish too, i.e. the pool mean
is exactly 1500 with no re-centring. With 400 Elo against data worth about games/4 per logit^2, a bot with 40
games is pulled toward the mean by about 2 % of its distance from it. ``prior_sd=None`` switches the prior off
(pure maximum likelihood, the mean pinned at 1500 by constraint); that MLE exists only when every split of the
bots into two groups has each group scoring against the other, which is checked.

The fit maximises the log-posterior by Newton's method with a backtracking line search: the objective is
strictly concave, so this converges from any start, quadratically near the optimum (to 1e-11 logits here).
Hessian systems are solved by Cholesky. The result does not depend on the order of the log beyond float
rounding (about 1e-13 Elo).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from operator import mul

from arena.ratings.outcomes import MatchOutcome, pair_weight, seat_pairs

ELO_PER_LOGIT = 400.0 / math.log(10.0)
BASE_ELO = 1500.0
DEFAULT_PRIOR_SD = 400.0
TOLERANCE = 1e-11


@dataclass(frozen=True)
class Tally:
    """A match log summed for fitting: bots in canonical order, the weighted score matrix, per-bot counts.

    ``entries`` lists every score-matrix entry of every match as parallel columns (match position, i, j,
    points), so a bootstrap can re-sum resampled logs without walking the matches again.
    """

    bots: tuple[Hashable, ...]
    matches: int
    score: list[list[float]]
    games: list[int]
    wins: list[int]
    draws: list[int]
    losses: list[int]
    entries: tuple[list[int], list[int], list[int], list[float]]


def canonical_order(bots: Iterable[Hashable]) -> list[Hashable]:
    """Sorted bot ids (by repr when ids of different types do not compare), so results never depend on order."""
    unique = set(bots)
    try:
        return sorted(unique)  # type: ignore[type-var]
    except TypeError:
        return sorted(unique, key=lambda bot: (type(bot).__name__, repr(bot)))


def tally(matches: Iterable[MatchOutcome]) -> Tally:
    """Sum a match log into the score matrix and the per-bot games and pairwise win/draw/loss counts."""
    matches = list(matches)
    bots = tuple(canonical_order(bot for match in matches for bot in match.bots))
    index = {bot: i for i, bot in enumerate(bots)}
    n = len(bots)
    score = [[0.0] * n for _ in range(n)]
    games, wins, draws, losses = [0] * n, [0] * n, [0] * n, [0] * n
    entry_match: list[int] = []
    entry_i: list[int] = []
    entry_j: list[int] = []
    entry_points: list[float] = []
    patterns: dict[tuple[str, tuple[int, ...]], list[tuple[int, int, float]]] = {}
    for m, match in enumerate(matches):
        key = (match.kind, match.ranks)
        if key not in patterns:
            patterns[key] = seat_pairs(match)
        seats = [index[bot] for bot in match.bots]
        weight = pair_weight(match.players)
        for i in seats:
            games[i] += 1
        for a, b, points in patterns[key]:
            i, j = seats[a], seats[b]
            if points == 1.0:
                score[i][j] += weight
                wins[i] += 1
                losses[j] += 1
                entry_match.append(m)
                entry_i.append(i)
                entry_j.append(j)
                entry_points.append(weight)
            else:
                half = weight / 2
                score[i][j] += half
                score[j][i] += half
                draws[i] += 1
                draws[j] += 1
                entry_match += (m, m)
                entry_i += (i, j)
                entry_j += (j, i)
                entry_points += (half, half)
    return Tally(bots, len(matches), score, games, wins, draws, losses, (entry_match, entry_i, entry_j, entry_points))


def log_sigmoid(x: float) -> float:
    """log(1 / (1 + e^-x)) without overflow for large |x|."""
    return -math.log1p(math.exp(-x)) if x >= 0 else x - math.log1p(math.exp(x))


def log_posterior(score: Sequence[Sequence[float]], r: Sequence[float], precision: float) -> float:
    """The objective: sum of score[i][j] * log sigma(r_i - r_j), minus precision * sum(r_i^2) / 2."""
    total = -0.5 * precision * sum(x * x for x in r)
    for i, row in enumerate(score):
        ri = r[i]
        total += sum(s * log_sigmoid(ri - rj) for s, rj in zip(row, r, strict=True) if s)
    return total


def gradient_and_hessian(
    score: Sequence[Sequence[float]], r: Sequence[float], precision: float
) -> tuple[list[float], list[list[float]]]:
    """Gradient of the log-posterior and the positive definite matrix A = -Hessian (+ J/n without a prior)."""
    n = len(r)
    grad = [-precision * x for x in r]
    hess = [[0.0] * n for _ in range(n)]
    for i in range(n):
        ri, row_i, hess_i = r[i], score[i], hess[i]
        for j in range(i + 1, n):
            games = row_i[j] + score[j][i]
            if not games:
                continue
            p = 1.0 / (1.0 + math.exp(r[j] - ri))
            surprise = row_i[j] - games * p
            grad[i] += surprise
            grad[j] -= surprise
            c = games * p * (1.0 - p)
            hess_i[i] += c
            hess[j][j] += c
            hess_i[j] -= c
            hess[j][i] -= c
    shift = precision if precision else 1.0 / n  # no prior: J/n fixes the free shift, the step stays mean-free
    for i in range(n):
        if precision:
            hess[i][i] += shift
        else:
            hess_i = hess[i]
            for j in range(n):
                hess_i[j] += shift
    return grad, hess


def cholesky(a: Sequence[Sequence[float]]) -> list[list[float]]:
    """Lower-triangular L (rows, ragged) with L L^T = a, for symmetric positive definite a."""
    low: list[list[float]] = []
    for i in range(len(a)):
        row = [0.0] * (i + 1)
        for j in range(i):
            row[j] = (a[i][j] - sum(map(mul, row[:j], low[j][:j]))) / low[j][j]
        diag = a[i][i] - sum(x * x for x in row[:i])
        if diag <= 0.0:
            raise ArithmeticError("matrix is not positive definite")
        row[i] = math.sqrt(diag)
        low.append(row)
    return low


def solve_cholesky(low: Sequence[Sequence[float]], b: Sequence[float]) -> list[float]:
    """Solve L L^T x = b by forward and back substitution."""
    n = len(b)
    y = [0.0] * n
    for i in range(n):
        y[i] = (b[i] - sum(map(mul, low[i][:i], y[:i]))) / low[i][i]
    x = [0.0] * n
    for i in reversed(range(n)):
        x[i] = (y[i] - sum(low[k][i] * x[k] for k in range(i + 1, n))) / low[i][i]
    return x


def solve_spd(a: Sequence[Sequence[float]], b: Sequence[float]) -> list[float]:
    """Solve a x = b for symmetric positive definite a."""
    return solve_cholesky(cholesky(a), b)


def reaches_everyone(score: Sequence[Sequence[float]], forward: bool) -> bool:
    """Whether bot 0 reaches every bot along 'scored against' edges (reversed when not ``forward``)."""
    n = len(score)
    seen, stack = {0}, [0]
    while stack:
        i = stack.pop()
        for j in range(n):
            if j not in seen and (score[i][j] if forward else score[j][i]) > 0:
                seen.add(j)
                stack.append(j)
    return len(seen) == n


def mle_exists(score: Sequence[Sequence[float]]) -> bool:
    """True when the 'scored against' graph is strongly connected (Hunter 2004, assumption 1)."""
    return len(score) <= 1 or (reaches_everyone(score, True) and reaches_everyone(score, False))


def precision_for(prior_sd: float | None) -> float:
    """The prior's precision in 1/logit^2 (0 = no prior) from its standard deviation in Elo."""
    if prior_sd is None:
        return 0.0
    if prior_sd <= 0:
        raise ValueError("prior_sd must be positive (or None for no prior)")
    return (ELO_PER_LOGIT / prior_sd) ** 2


def fit_logits(
    score: Sequence[Sequence[float]],
    precision: float,
    start: Sequence[float] | None = None,
    max_iterations: int = 100,
) -> list[float]:
    """Maximise the log-posterior by damped Newton; ratings in logits, mean zero."""
    n = len(score)
    if precision == 0.0 and not mle_exists(score):
        raise ValueError("no finite maximum likelihood fit: some bots never scored against the rest; use a prior")
    r = list(start) if start is not None else [0.0] * n
    if precision == 0.0:
        mean = sum(r) / n if n else 0.0
        r = [x - mean for x in r]
    value = log_posterior(score, r, precision)
    for _ in range(max_iterations):
        grad, hess = gradient_and_hessian(score, r, precision)
        step = solve_spd(hess, grad)
        t = 1.0
        while True:
            trial = [x + t * d for x, d in zip(r, step, strict=True)]
            trial_value = log_posterior(score, trial, precision)
            if trial_value >= value - 1e-12 * abs(value) or t < 1e-8:
                break
            t /= 2
        r, value = trial, trial_value
        if max(map(abs, step), default=0.0) * t < TOLERANCE:
            break
    else:
        raise ArithmeticError("Bradley-Terry fit did not converge")
    mean = sum(r) / n if n else 0.0
    return [x - mean for x in r]


def to_elo(logits: Iterable[float]) -> list[float]:
    """Logits (mean zero) to Elo points around the 1500 anchor."""
    return [BASE_ELO + ELO_PER_LOGIT * x for x in logits]


def arena_elo(matches: Iterable[MatchOutcome], *, prior_sd: float | None = DEFAULT_PRIOR_SD) -> dict[Hashable, float]:
    """Fit a whole log at once (order-independent); bot -> Elo, pool mean 1500."""
    counts = tally(matches)
    return dict(zip(counts.bots, to_elo(fit_logits(counts.score, precision_for(prior_sd))), strict=True))
