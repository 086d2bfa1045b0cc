"""The scalable path for big leaderboards: a numpy Newton fit and the one-step (linearised) bootstrap.

Why: the exact path (``bradley_terry`` in pure Python, ``bootstrap`` refitting 200 resamples) grows as
N^3 per Newton iteration and 200 N^3 for the bootstrap, which is minutes at a thousand bots
(docs/benchmarks.md). Here:

Fit. The same posterior as ``bradley_terry`` (Bradley-Terry, Gaussian prior of ``prior_sd`` Elo, mean pinned
at 1500 by the prior), maximised by damped Newton with dense numpy arrays: gradient and Hessian from the
N x N score matrix, one LU solve per iteration, warm-started from the stored ratings when the caller has
them (after one more match the stored optimum is ~1e-3 logits away: two iterations). It is the same optimum
as the exact path, not an approximation: the fit stops after a full step below 1e-6 logits, whose remaining
error is of the order of its square (the tests hold it to the pure-Python fit within 1e-6 Elo).
``newton`` is the exact path's fit of the same posterior (``posterior``, small boards): exact solves from
a cold start, to 1e-10 logits.

One-step bootstrap (the approximation). A bootstrap resample multiplies match m by its draw count c_m; its
refit, started at the fit r, takes the Newton step A^-1 g_b with A the fit's negative Hessian and
g_b = sum_m (c_m - 1) g_m, g_m being match m's gradient contribution at r (its pairs' w (score - p) on its
seats; they sum to the prior's pull, so the ones drawn once cancel). One step is the linearisation of the
refit: its error is second order in the step (a resample moves a bot by about its standard error, so the
error is about that squared, in logits) plus the change of A between resamples (relative ~1/sqrt(games)).
Drawing c (resamples x matches counts) and summing resamples x matches x seats terms would cost about 2 s
at 100,000 matches, so the draws are made from the distribution that sum has: g_b is a sum of 100,000
independent match terms with mean 0 and covariance V = sum_m g_m g_m^T - s s^T / M (s = sum_m g_m), so by the
central limit theorem g_b ~ N(0, V): g_b = L z with L L^T = V (+ a 1e-10 relative jitter, V being singular
along the all-ones direction since every g_m sums to zero) and z standard normal. Whole matches stay the
unit (V sums each match's own outer product, so pairs of one deal keep their correlation). Each sample
A^-1 L z is projected to mean zero, as every exact refit is. What is lost: the skew of the exact
bootstrap (its second-order terms), which matters only for bots with few games; ``leaderboard`` uses this
path only above its size thresholds and the tests bound the difference on medium leaderboards.

Cost at 1,000 bots and 100,000 four-player matches: O(M k^2) to build V, and O(N^3) for one Cholesky of V
and the LU solves of A (one per Newton iteration, the last shared with the samples' 200 right-hand sides).
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Mapping

import numpy as np

from arena.ratings.bradley_terry import BASE_ELO, ELO_PER_LOGIT
from arena.ratings.packed import PackedLog, PairTally

STEP_TOLERANCE = 1e-6  # a full step this small leaves an error of its square
NEAR = 1e-3  # after a full step this small the point is ~1e-6 from the optimum: the bootstrap is built there
UNDAMPED = 1e-2  # Newton steps below this are taken whole, without evaluating the objective
MAX_ITERATIONS = 100
MAX_HALVINGS = 40
CLIP = 300.0  # logits (130,000 Elo): e^(2 CLIP) is still a finite double
JITTER = 1e-10
CG_TOLERANCE = 1e-4  # an inexact step this good leaves an error of ~1e-4 of the step plus the step squared
CG_MAX_ITERATIONS = 200
SOLVE_BLOCK = 128
EXACT_TOLERANCE = 1e-10  # the exact path's Newton (``newton``) stops below this step


def start_logits(bots: tuple[Hashable, ...], start: Mapping[Hashable, float] | None) -> np.ndarray:
    """Warm start in logits from stored Elo ratings; bots without one start at the pool mean."""
    r = np.zeros(len(bots))
    if start:
        for i, bot in enumerate(bots):
            elo = start.get(bot)
            if elo is not None and np.isfinite(elo):
                r[i] = (elo - BASE_ELO) / ELO_PER_LOGIT
        r -= r.mean()
    return r


def _probabilities(r: np.ndarray) -> np.ndarray:
    """p[i, j] = sigma(r_i - r_j) = 1 / (1 + e^-r_i e^r_j): an outer product of 2n exponentials instead of n^2
    (ratings are clipped to +-CLIP logits first, so the product stays finite)."""
    clipped = np.clip(r, -CLIP, CLIP)
    odds = np.outer(np.exp(-clipped), np.exp(clipped))
    odds += 1.0
    return np.reciprocal(odds, out=odds)


def _objective(score: np.ndarray, p: np.ndarray, r: np.ndarray, precision: float) -> float:
    """Log-posterior: sum score log p - precision |r|^2 / 2 (p never underflows to 0 after the clip)."""
    return float((score * np.log(p)).sum() - 0.5 * precision * (r @ r))


def _gradient_hessian(score: np.ndarray, games: np.ndarray, won: np.ndarray, p: np.ndarray, r: np.ndarray,
                      precision: float) -> tuple[np.ndarray, np.ndarray]:
    """Gradient and A = -Hessian (positive definite thanks to the prior)."""
    expected = games * p
    grad = won - expected.sum(axis=1) - precision * r
    a = expected * (p - 1.0)  # off-diagonal: -games p (1 - p); the diagonal of games is zero
    a[np.diag_indices_from(a)] = precision - a.sum(axis=1)
    return grad, a


def pair_probabilities(pairs: PairTally, r: np.ndarray) -> np.ndarray:
    """M x P: for every seat pair of every match, the model's probability that seat a beats seat b."""
    clipped = np.clip(r, -CLIP, CLIP)
    return 1.0 / (1.0 + np.exp(-clipped)[pairs.first] * np.exp(clipped)[pairs.second])


def match_gradients(log: PackedLog, pairs: PairTally, r: np.ndarray, p: np.ndarray | None = None) -> np.ndarray:
    """M x k: each match's contribution to the log-likelihood gradient, per seat, at ratings r (``p``: the
    pairs' probabilities there, if at hand)."""
    p = pair_probabilities(pairs, r) if p is None else p
    surprise = np.where(pairs.mask, pairs.weight * (pairs.points - p), 0.0)
    out = np.zeros(log.seats.shape)
    for column, (a, b) in enumerate(zip(pairs.seat_a.tolist(), pairs.seat_b.tolist(), strict=True)):
        out[:, a] += surprise[:, column]
        out[:, b] -= surprise[:, column]
    return out


def gradient_covariance(log: PackedLog, per_match: np.ndarray) -> np.ndarray:
    """V = sum_m g_m g_m^T - s s^T / M: the covariance of a resample's gradient (whole matches drawn)."""
    n, seats = len(log.bots), log.seats
    first, second = np.triu_indices(log.players)  # seat pairs a <= b: V is symmetric
    cells = (seats[:, first] * n + seats[:, second]).ravel()
    outer = (per_match[:, first] * per_match[:, second]).ravel()
    half = np.bincount(cells, weights=outer, minlength=n * n).reshape(n, n)
    v = half + half.T
    v[np.diag_indices(n)] /= 2.0  # the a == b terms landed on the diagonal, counted twice by the sum
    total = np.bincount(seats.ravel(), weights=per_match.ravel(), minlength=n)
    v -= np.outer(total, total) / max(log.matches, 1)
    return v


def gaussian_factor(v: np.ndarray) -> np.ndarray:
    """L with L L^T = V + jitter I (V is positive semi-definite and singular along the all-ones vector)."""
    scale = max(float(np.diag(v).max(initial=0.0)), 1e-300)
    jitter = JITTER * scale
    for _ in range(8):
        try:
            return np.linalg.cholesky(v + jitter * np.eye(len(v)))
        except np.linalg.LinAlgError:
            jitter *= 100.0
    raise ArithmeticError("the gradient covariance could not be factored")


def solve_spd(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Solve A X = B for symmetric positive definite A: Cholesky, then blocked triangular solves.

    numpy has no triangular solve, and ``np.linalg.solve`` factors by LU at twice Cholesky's cost; the
    blocks' triangular inverses are small and everything else is matrix products."""
    low = np.linalg.cholesky(a)
    n = len(a)
    blocks = list(itertools.pairwise([*range(0, n, SOLVE_BLOCK), n]))
    inverse = [np.linalg.inv(low[s:e, s:e]) for s, e in blocks]
    y = np.empty_like(b)
    for (s, e), inv in zip(blocks, inverse, strict=True):  # L y = b
        y[s:e] = inv @ (b[s:e] - low[s:e, :s] @ y[:s])
    x = np.empty_like(b)
    for (s, e), inv in reversed(list(zip(blocks, inverse, strict=True))):  # L^T x = y
        x[s:e] = inv.T @ (y[s:e] - low[e:, s:e].T @ x[e:])
    return x


def triangular_inverse(low: np.ndarray) -> np.ndarray:
    """inv(L) for lower-triangular L, by halves: [[A, 0], [B, C]]^-1 = [[A^-1, 0], [-C^-1 B A^-1, C^-1]].

    numpy has no triangular inverse, and ``np.linalg.inv`` treats L as a general matrix (LU, then a full
    inverse): three to four times the work of these two matrix products per level."""
    n = len(low)
    if n <= SOLVE_BLOCK:
        return np.linalg.inv(low)
    half = n // 2
    top, bottom = triangular_inverse(low[:half, :half]), triangular_inverse(low[half:, half:])
    out = np.zeros_like(low)
    out[:half, :half] = top
    out[half:, half:] = bottom
    out[half:, :half] = -(bottom @ (low[half:, :half] @ top))
    return out


def conjugate_gradient(a: np.ndarray, b: np.ndarray, precision: float) -> np.ndarray:
    """An inexact Newton step: solve A x = b to a relative residual of ``CG_TOLERANCE`` by Jacobi-preconditioned
    conjugate gradients (one N^2 product per iteration instead of an N^3 factorisation; falls back to LU).

    A is the prior's precision times the identity plus a Laplacian, so the all-ones vector is an eigenvector
    with eigenvalue ``precision``: the mean of x is solved exactly and CG runs on mean-free vectors, where A
    is well conditioned whenever the bots' games connect them well."""
    n = len(b)
    x = np.full(n, b.mean() / precision)
    residual = b - b.mean()
    if not residual.any():
        return x
    inverse_diagonal = 1.0 / np.diag(a)
    z = inverse_diagonal * residual
    z -= z.mean()
    direction = z.copy()
    rz = residual @ z
    goal = CG_TOLERANCE * float(np.linalg.norm(residual))
    for _ in range(min(n, CG_MAX_ITERATIONS)):
        product = a @ direction
        alpha = rz / (direction @ product)
        x += alpha * direction
        residual -= alpha * product
        if np.linalg.norm(residual) <= goal:
            return x
        z = inverse_diagonal * residual
        z -= z.mean()
        rz, previous = residual @ z, rz
        direction = z + (rz / previous) * direction
    return solve_spd(a, b)


def fit(log: PackedLog, pairs: PairTally, precision: float, start: np.ndarray, gen: np.random.Generator | None,
        resamples: int, *, games: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Newton to the optimum, then ``resamples`` one-step bootstrap samples (logits, resamples x n, mean zero).

    The samples are built at the first point known to be within ~1e-6 logits of the optimum, in the same LU
    solve as the Newton step taken from there (see the module docstring)."""
    if precision <= 0.0:
        raise ValueError("the scalable fit needs the prior (a bot may have won or lost every game)")
    score = pairs.score
    games = score + score.T if games is None else games  # the caller's copy when it fits many times
    won = score.sum(axis=1)
    n = len(start)
    r = start.copy()
    p: np.ndarray | None = _probabilities(r)
    value: float | None = None  # the objective at r, evaluated only when a step may need damping
    near = False
    sampling = bool(resamples) and gen is not None
    samples = np.zeros((0, n))
    for _ in range(MAX_ITERATIONS):
        if p is None:
            p = _probabilities(r)
        grad, a = _gradient_hessian(score, games, won, p, r, precision)
        if near and sampling:
            factor = gaussian_factor(gradient_covariance(log, match_gradients(log, pairs, r)))
            draws = factor @ gen.standard_normal((n, resamples))  # type: ignore[union-attr]
            solved = solve_spd(a, np.column_stack([grad, draws]))
            step, deltas = solved[:, 0], solved[:, 1:].T
            samples = deltas - deltas.mean(axis=1, keepdims=True)
        else:
            step = conjugate_gradient(a, grad, precision)
        size = float(np.abs(step).max(initial=0.0))
        scale = 1.0
        if size < UNDAMPED:  # the quadratic model holds: a full step always gains
            r, p, value = r + step, None, None
        else:
            if value is None:
                value = _objective(score, p, r, precision)
            r, p, value, scale = _damped(score, r, step, value, precision)
        size *= scale
        if size < STEP_TOLERANCE and scale == 1.0 and (near or not sampling):
            return r - r.mean(), samples + (r - r.mean())
        near = scale == 1.0 and size < NEAR
    raise ArithmeticError("Bradley-Terry fit did not converge")


def _damped(score: np.ndarray, r: np.ndarray, step: np.ndarray, value: float,
            precision: float) -> tuple[np.ndarray, np.ndarray, float, float]:
    """The step halved until the objective does not fall (both Newton paths): the new ratings, their
    probabilities, the objective there and the scale taken."""
    scale = 1.0
    for _ in range(MAX_HALVINGS):
        trial = r + scale * step
        trial_p = _probabilities(trial)
        trial_value = _objective(score, trial_p, trial, precision)
        if trial_value >= value - 1e-12 * abs(value):
            break
        scale /= 2.0
    return trial, trial_p, trial_value, scale


def newton(score: np.ndarray, precision: float, start: np.ndarray) -> np.ndarray:
    """The mode by damped Newton with exact solves (the exact path: no iterative solver, no warm start)."""
    games = score + score.T
    won = score.sum(axis=1)
    r = start.copy()
    p = _probabilities(r)
    value = _objective(score, p, r, precision)
    for _ in range(MAX_ITERATIONS):
        grad, a = _gradient_hessian(score, games, won, p, r, precision)
        step = np.linalg.solve(a, grad)
        r, p, value, scale = _damped(score, r, step, value, precision)
        if float(np.abs(step).max(initial=0.0)) * scale < EXACT_TOLERANCE:
            return r - r.mean()
    raise ArithmeticError("Bradley-Terry fit did not converge")
