"""SPRT for a head-to-head test: is bot A at least ``elo1`` stronger than B, or at most ``elo0``?

Flavour: the generalized SPRT on game scores in the normal approximation, as cutechess-cli and fishtest's
``LLR_logistic`` compute it. With per-unit scores x (mean m, variance v over N units) and the expected scores
of the two hypotheses s_h = 1 / (1 + 10^(-elo_h / 400)),

    LLR = N * (s1 - s0) * (2 m - s0 - s1) / (2 v)

which is the log-likelihood ratio of two normal laws with means s0 and s1 and the empirical variance. The unit
is either one game (``add``: scores 0, 0.5, 1, the trinomial model) or one colour-swapped pair of games with
the same seed (``add_pair``: the pair's mean score in {0, .25, .5, .75, 1}, the pentanomial model). Paired
games share their deal, so their scores are correlated; treating the pair as the unit takes that into account,
and the arena's two-seat schedules are colour-swapped pairs, so that is the mode to use there. One test uses one
unit; mixing them is refused.

Bounds (Wald): lower = ln(beta / (1 - alpha)), upper = ln((1 - beta) / alpha); H1 is accepted when the LLR
reaches the upper bound, H0 at the lower one. While the scores have no spread yet (v = 0: only wins, only
draws...), the empirical variance is zero and the formula undefined; the test then adds one pseudo-unit split
evenly between the worst and the best score (half a unit at 0, half at 1). That keeps the LLR finite and
conservative: with elo0 = 0 and elo1 = 10, a bot that wins every game is accepted after 14 games (not after
the first, and not never, as a plain "no spread, no evidence" rule would have it), and nothing but draws
accepts H0 only after 84 games.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

CONTINUE = "continue"
ACCEPT_H0 = "H0"
ACCEPT_H1 = "H1"
GAME_SCORES = (0.0, 0.5, 1.0)


@dataclass(frozen=True, slots=True)
class SprtStatus:
    """Where a test stands: units counted, mean score, LLR, Wald bounds, and the decision so far."""

    units: int
    mean: float
    llr: float
    lower: float
    upper: float
    decision: str


def expected_score(elo: float) -> float:
    """Score expectation of a side ``elo`` points stronger (logistic Elo)."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


class Sprt:
    """Sequential test of elo0 (H0) against elo1 (H1); feed it scores of the tested side, ask ``status``."""

    def __init__(self, elo0: float, elo1: float, alpha: float = 0.05, beta: float = 0.05) -> None:
        if not elo0 < elo1:
            raise ValueError("elo0 must be below elo1")
        if not (0.0 < alpha < 1.0 and 0.0 < beta < 1.0 and alpha + beta < 1.0):
            raise ValueError("alpha and beta must be in (0, 1) with alpha + beta < 1")
        self.elo0, self.elo1 = elo0, elo1
        self.lower = math.log(beta / (1.0 - alpha))
        self.upper = math.log((1.0 - beta) / alpha)
        self._mode: str | None = None
        self._units = 0
        self._sum = 0.0
        self._sum_squares = 0.0

    def _count(self, mode: str, value: float) -> None:
        if self._mode not in (None, mode):
            raise ValueError("one test counts single games or game pairs, not both")
        self._mode = mode
        self._units += 1
        self._sum += value
        self._sum_squares += value * value

    def add(self, score: float) -> None:
        """One game's score for the tested side: 1 win, 0.5 draw, 0 loss."""
        if score not in GAME_SCORES:
            raise ValueError(f"a game scores 0, 0.5 or 1, not {score!r}")
        self._count("games", float(score))

    def add_pair(self, first: float, second: float) -> None:
        """A colour-swapped pair of games on one seed: the unit is the pair's mean score."""
        if first not in GAME_SCORES or second not in GAME_SCORES:
            raise ValueError("a game scores 0, 0.5 or 1")
        self._count("pairs", (first + second) / 2.0)

    @property
    def llr(self) -> float:
        if not self._units:
            return 0.0
        units, total, squares = float(self._units), self._sum, self._sum_squares
        mean = total / units
        variance = squares / units - mean * mean
        if variance <= 1e-12:
            units, total, squares = units + 1.0, total + 0.5, squares + 0.5  # the pseudo-unit: 1/2 at 0, 1/2 at 1
            mean = total / units
            variance = squares / units - mean * mean
        s0, s1 = expected_score(self.elo0), expected_score(self.elo1)
        return units * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * variance)

    def status(self) -> SprtStatus:
        llr = self.llr
        decision = ACCEPT_H1 if llr >= self.upper else ACCEPT_H0 if llr <= self.lower else CONTINUE
        mean = self._sum / self._units if self._units else 0.0
        return SprtStatus(self._units, mean, llr, self.lower, self.upper, decision)
