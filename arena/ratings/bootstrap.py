"""Bootstrap over whole matches: the spread of the Bradley-Terry fit when the log is drawn again.

Pairs of one match share its deal, so resampling pairs would understate the noise; resampling whole matches
with replacement keeps that dependence. Each resample draws len(log) match indices uniformly with replacement;
its score matrix is the count-weighted sum of the per-match score entries (one scatter-add per resample over
the entries ``tally`` recorded), and all resamples are refitted together by Newton's method, warm-started at
the main fit. Newton converges quadratically, so the refit stops once a step is below 1e-6 logits: the error
left after that step is of order its square (about 1e-12 logits, 1e-10 Elo).

numpy, because 200 refits in pure Python miss the benchmark's goal by far (the refits' O(n^2) gradient and
Cholesky work and the per-resample aggregation; docs/benchmarks.md). The single main fit stays in pure
Python (``bradley_terry``), and the tests check that both solvers agree.

The caller's ``random.Random`` seeds the numpy generator (128 bits drawn from it), so one seed fixes the table.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np

from arena.ratings.bradley_terry import Tally

STEP_TOLERANCE = 1e-6
MAX_ITERATIONS = 100
MAX_HALVINGS = 40
CLIP = 500.0  # logit differences beyond this are clipped before exp (no overflow; the odds are 1e217 anyway)
CHUNK_CELLS = 4_000_000  # resamples x bots^2 per batch: bounds memory for big pools


def resample_counts(gen: np.random.Generator, matches: int, resamples: int) -> np.ndarray:
    """resamples x matches array: how often each match was drawn (each row sums to ``matches``)."""
    draws = gen.integers(0, matches, size=(resamples, matches))
    draws += (np.arange(resamples) * matches)[:, None]
    return np.bincount(draws.ravel(), minlength=resamples * matches).reshape(resamples, matches)


def resampled_scores(counts: Tally, weights: np.ndarray) -> np.ndarray:
    """batch x n x n score matrices of the logs whose match multiplicities are the rows of ``weights``."""
    n = len(counts.bots)
    match, first, second, points = (np.asarray(column) for column in counts.entries)
    cells = first * n + second
    out = np.empty((len(weights), n * n))
    for row, multiplicity in zip(out, weights, strict=True):
        row[:] = np.bincount(cells, weights=multiplicity[match] * points, minlength=n * n)
    return out.reshape(-1, n, n)


def win_probabilities(r: np.ndarray) -> np.ndarray:
    """p[b, i, j] = sigma(r_i - r_j) for every resample b."""
    diff = r[:, :, None] - r[:, None, :]
    np.clip(diff, -CLIP, CLIP, out=diff)
    return 1.0 / (1.0 + np.exp(-diff))


def batch_objective(score: np.ndarray, p: np.ndarray, r: np.ndarray, precision: float) -> np.ndarray:
    """Log-posterior of each resample from its win probabilities: sum score log p - precision |r|^2 / 2."""
    return (score * np.log(p)).sum(axis=(1, 2)) - 0.5 * precision * (r * r).sum(axis=1)


def batch_fit(score: np.ndarray, start: np.ndarray, precision: float) -> np.ndarray:
    """Damped Newton on a stack of score matrices (batch x n x n) from ``start`` (batch x n); prior required."""
    if precision <= 0.0:
        raise ValueError("bootstrap refits need the prior: a resample can lose a bot's only win or loss")
    games = score + score.transpose(0, 2, 1)
    won = score.sum(axis=2)
    n = start.shape[1]
    diagonal = np.arange(n)
    r = start.copy()
    p = win_probabilities(r)
    value = batch_objective(score, p, r, precision)
    for _ in range(MAX_ITERATIONS):
        expected = games * p
        grad = won - expected.sum(axis=2) - precision * r
        hess = expected * (p - 1.0)  # off-diagonal: -games p (1 - p)
        hess[:, diagonal, diagonal] = precision - hess.sum(axis=2)  # the diagonal of hess was 0 (no self-games)
        step = np.linalg.solve(hess, grad[:, :, None])[:, :, 0]
        scale = np.ones(len(r))
        for _ in range(MAX_HALVINGS):  # backtrack only the resamples whose objective fell
            trial = r + scale[:, None] * step
            trial_p = win_probabilities(trial)
            trial_value = batch_objective(score, trial_p, trial, precision)
            worse = trial_value < value - 1e-12 * np.abs(value)
            if not worse.any():
                break
            scale[worse] /= 2.0
        r, p, value = trial, trial_p, trial_value
        if np.abs(step * scale[:, None]).max() < STEP_TOLERANCE:
            return r
    raise ArithmeticError("bootstrap refit did not converge")


def bootstrap_logits(
    counts: Tally, main: Sequence[float], precision: float, rng: random.Random, resamples: int
) -> np.ndarray:
    """``resamples`` x n refitted ratings (logits, mean zero), each on the log's matches drawn with replacement."""
    n = len(main)
    gen = np.random.default_rng(rng.getrandbits(128))
    multiplicities = resample_counts(gen, counts.matches, resamples)
    start = np.asarray(main, dtype=float)
    chunk = max(1, CHUNK_CELLS // (n * n))
    out = [np.empty((0, n))]
    for first in range(0, resamples, chunk):
        block = multiplicities[first : first + chunk]
        score = resampled_scores(counts, block)
        out.append(batch_fit(score, np.tile(start, (len(block), 1)), precision))
    return np.concatenate(out)
