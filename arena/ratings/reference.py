"""The point each bot's interval is measured from: its group's information-weighted mean strength.

Why: Bradley-Terry knows differences only; a bot's own interval needs a reference, and the table used the
plain mean of the bot's group (``groups``). That mean carries every member's uncertainty in equal shares,
so one newcomer with a single match (sd about 300 Elo) moved it by 300 / n: on a board of four bots
measured to +-15-30 Elo, a fifth bot's first match widened all four intervals to about +-85 Elo, though
nothing was learnt about them. A board settled a moment before looked unsettled again at every newcomer.

So the reference is each group's mean weighted by what the log knows of each bot: w_i proportional to the
diagonal of the likelihood's Fisher information at the fit, sum_j games_ij p_ij (1 - p_ij), normalised
within the group. A bot with one match weighs about 1 / 4 of a pair's information, one with hundreds of
matches hundreds of times that, so a newcomer barely moves the reference; bots measured alike weigh alike
and the reference is then the plain mean, as before. The information depends only on rating differences,
so the table's own Elo gives the same weights (``weights``): the benchmark reads the truth against them.

Only the reference moves: differences between bots, rank ranges and LOS do not depend on it. Each group's
reference is at 1500 on display. A group without information (a bot whose only results link no one, e.g.
tied winners of a ``one_loser`` match) takes its plain mean.
"""

from __future__ import annotations

import numpy as np


def information(games: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Diagonal of the Fisher information at ratings ``r`` (logits) from the N x N pair weights ``games``:
    sum_j games_ij p_ij (1 - p_ij), p_ij = sigma(r_i - r_j)."""
    x = np.clip(np.subtract.outer(r, r), -300.0, 300.0)
    return (games / (2.0 + 2.0 * np.cosh(x))).sum(axis=1)  # p (1 - p) = 1 / (2 + 2 cosh x)


def weights(games: np.ndarray, r: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Each bot's weight in its group's reference (they sum to 1 over every group): its information at
    ``r`` (any per-group shift of ``r`` gives the same), or equal shares in a group with none."""
    info = information(games, r)
    totals = np.bincount(group, weights=info)
    counts = np.bincount(group)
    plain = totals[group] <= 0.0
    return np.where(plain, 1.0 / counts[group], info / np.where(plain, 1.0, totals[group]))


def centred(values: np.ndarray, group: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``values`` (... x N) minus each group's reference (weighted mean with ``w``) along the last axis."""
    return values - ((values * w) @ _membership(group))[..., group]


def relative_variances(inverse: np.ndarray, group: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Var(r_i - w_g . r) for every bot i of group g, when A^-1 = inverse^T inverse is the covariance of r:
    the squared norm of column i of ``inverse`` minus its ``w_g``-weighted sum of columns (O(N^2))."""
    reference = inverse @ (w[:, None] * _membership(group))  # N x G: inverse w_g
    return ((inverse - reference[:, group]) ** 2).sum(axis=0)


def _membership(group: np.ndarray) -> np.ndarray:
    member = np.zeros((len(group), int(group.max(initial=0)) + 1))
    member[np.arange(len(group)), group] = 1.0
    return member
