"""Comparison groups: the bots of a leaderboard that a chain of matches links, each group its own anchor.

Why: a group of bots that never met the rest (a three-bot tournament on a settled board's game and player
count) has no data on its strength relative to the others. The prior N(0, tau^2) alone fixes that offset:
the mode puts every group's mean at 1500 (the prior's pull is the only force on a group's mean), and the
posterior gives the offset between groups of n_a and n_b bots an sd of tau sqrt(1/n_a + 1/n_b). Intervals
taken relative to the whole pool's mean carried that prior-only offset into every bot's interval: four bots
with about 1,700 matches each went from +-12..16 to +-162 Elo (all of them provisional) when three new bots
played one round robin among themselves, and the new bots were ranked among them with rank ranges drawn
from that prior, as if they had met them. So:

* each bot's interval is relative to a reference within its own group (its mean weighted by each bot's
  information, ``reference``), so it carries no offset to a group it never met; the prior's spread and the
  design effect are still fitted to the whole board, and a small group moves them little;
* ranks between groups are open: a rank range is the range within the bot's group, widened by every bot
  of the other groups, which may be above or below it for all the data know (``rank_ranges``), and the
  likelihood of superiority between bots of different groups is not given.

Groups are the connected components of the graph whose edges are the pairs that count (``games`` > 0): a
``one_loser`` match of tied winners links no one.
"""

from __future__ import annotations

import numpy as np


def labels(games: np.ndarray) -> np.ndarray:
    """Group index of every bot (0, 1, ... in order of each group's first bot) from the symmetric N x N
    matrix of pair weights: minimum-label propagation along the edges with pointer jumping."""
    n = len(games)
    first, second = np.nonzero(games > 0)
    root = np.arange(n)
    while True:
        lower = root.copy()
        np.minimum.at(lower, first, root[second])
        lower = lower[lower]  # every label is a bot of the same group whose label is no larger
        if np.array_equal(lower, root):
            break
        root = lower
    return np.unique(root, return_inverse=True)[1].ravel()


def rank_ranges(draws: np.ndarray, group: np.ndarray, tail: float) -> tuple[np.ndarray, np.ndarray]:
    """The ``tail`` and 1 - ``tail`` quantiles of each bot's rank (1 = best) over joint ``draws`` (draws x N),
    ranked within its group; the upper end is moved down by the bots of the other groups (see the module
    docstring). One group: exactly the quantiles of the rank over the whole board."""
    n = draws.shape[1]
    low, high = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    order = np.argsort(group, kind="stable")
    for members in np.split(order, np.cumsum(np.bincount(group))[:-1]):
        ranks = len(members) - np.argsort(np.argsort(draws[:, members], axis=1), axis=1)
        low[members] = np.quantile(ranks, tail, axis=0, method="lower")
        high[members] = np.quantile(ranks, 1.0 - tail, axis=0, method="higher") + (n - len(members))
    return low, high
