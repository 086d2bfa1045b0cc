"""How much a leaderboard's log really knows: observed over modelled information, with deals as units.

Why: the fit treats every pair of every match as an independent Bradley-Terry observation. The rotations of
a duplicate deal repeat each other's luck (they know less than that), and the pairs of one multiplayer race
are correlated the other way (a k-player race carries more than the one game its 1 / (k - 1)-weighted pairs
count for). The ratio d = J / H of the score's deal-clustered variance J to the model's curvature H measures
both; ``posterior`` divides the likelihood by it (the magnitude adjustment of a composite likelihood, the
analytic form of resampling whole deals). See ``design_effect``.
"""

from __future__ import annotations

import numpy as np

from arena.ratings import dense
from arena.ratings.packed import PackedLog, PairTally

PRIOR_INFORMATION = 5.0  # logit^-2: about 20 even matches' worth of agreement between model and data


def design_effect(log: PackedLog, pairs: PairTally, r: np.ndarray, inverse: np.ndarray | None,
                  variances: np.ndarray) -> float:
    """Observed over modelled information, J / H (see the module docstring): J sums, over bots and deals,
    the square of the deal's share of the bot's score, each deal's score taken as if the deal had been
    left out of the fit (its leverage undone: g / (I - H_deal Sigma), to first order the leave-one-out
    residual, without which sparse bots' residuals, partly fitted away, would read as a too-small J);
    H is the likelihood's curvature. ``PRIOR_INFORMATION`` is added to both so a small board keeps d
    near 1. Deals whose matches do not all seat the same bots are taken match by match."""
    p = dense.pair_probabilities(pairs, r)
    gradient = dense.match_gradients(log, pairs, r, p)
    m, k = log.seats.shape
    curvature = np.where(pairs.mask, pairs.weight * p * (1.0 - p), 0.0)
    hessian = np.zeros((m, k, k))  # each match's curvature in its own seat order (plain slices, no gathers)
    for column, (a, b) in enumerate(zip(pairs.seat_a.tolist(), pairs.seat_b.tolist(), strict=True)):
        c = curvature[:, column]
        hessian[:, a, a] += c
        hessian[:, b, b] += c
        hessian[:, a, b] -= c
        hessian[:, b, a] -= c
    if log.deals is None:  # every match a unit of its own
        count, unit_gradient, unit_hessian, members = m, gradient, hessian, log.seats
    else:  # the seats in bot order, so that the rotations of one deal line up
        order = np.argsort(log.seats, axis=1)
        bots = np.take_along_axis(log.seats, order, axis=1)
        gradient = np.take_along_axis(gradient, order, axis=1)
        hessian = hessian[np.arange(m)[:, None, None], order[:, :, None], order[:, None, :]]
        _, first, unit = np.unique(log.deals, return_index=True, return_inverse=True)
        unit = unit.ravel()
        regular = (bots == bots[first[unit]]).all(axis=1)
        unit = np.where(regular, unit, len(first) + np.arange(m))  # an irregular deal's matches: units of their own
        _, first, unit = np.unique(unit, return_index=True, return_inverse=True)
        unit = unit.ravel()
        count = len(first)
        unit_gradient = np.zeros((count, k))
        unit_hessian = np.zeros((count, k, k))
        np.add.at(unit_gradient, unit, gradient)
        np.add.at(unit_hessian, unit, hessian)
        members = bots[first]
    if inverse is not None:  # A^-1 = inverse^T inverse
        sigma = inverse.T @ inverse
        leverage = unit_hessian @ sigma[members[:, :, None], members[:, None, :]]
    else:  # the large-board path: A^-1's diagonal only, so H_deal Sigma scales H_deal's columns
        leverage = unit_hessian * variances[members][:, None, :]
    left_out = np.linalg.solve(np.eye(k) - leverage, unit_gradient[:, :, None])[:, :, 0]
    observed = float((left_out**2).sum())
    modelled = float(np.trace(unit_hessian, axis1=1, axis2=2).sum())
    return (observed + PRIOR_INFORMATION) / (modelled + PRIOR_INFORMATION)
