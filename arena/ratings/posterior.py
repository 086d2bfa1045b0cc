"""The leaderboard's intervals: a Bayesian posterior whose prior is fitted to the board, deals as units.

Why not the bootstrap any more: resampling the log cannot show what a bot's strength might be beyond the
few results it has. A bot with one match is missing from about a third of the resamples and sits at the
prior mean there, and its one win moves it up in the rest, so its interval began at the mean: one win
excluded every below-average strength, and bots with 1-2 matches were covered 50-86 % of the time.

Model. Bradley-Terry on the pairs of every match (``outcomes``), strengths r_i ~ N(0, tau^2) independently.
The posterior's mode is the table's Elo, and its Laplace approximation N(mode, A^-1), A the negative Hessian
of the log-posterior at the mode, gives the intervals. A bot's interval is then as wide as the prior allows
until its results narrow it: a new bot's interval spans the strengths such bots have, and it is honest on
average over the bots of a board exactly when tau is the spread of their strengths. So:

* tau is fitted (empirical Bayes, MacKay's fixed point): tau^2 = (nu0 s0^2 + |mode|^2) / (nu0 + gamma),
  gamma = n - tr(A^-1) / tau^2 the number of strengths the data pin down, with a weak hyperprior (``nu0``
  = ``HYPER_BOTS`` pseudo-bots at ``s0`` = ``HYPER_SD_ELO``) so that a board with no information about its
  spread (few bots, few matches) gets a spread typical of a game's bots instead of zero. Where the data
  leave tau uncertain, a plug-in tau makes new bots' intervals too narrow whenever it comes out low, so the
  posterior is a mixture over five spreads around it weighted by their Laplace evidence (``_spread_mixture``);
* A is the prior's precision plus each pair's curvature averaged over the approximation (``curvature``):
  at the mode the logistic curvature is at its highest for the sparse bots shrinkage puts near p = 1/2;
* the pairs of one match, and the rotations of one duplicate deal (same cards, rotated seats), are not
  independent. Each deal's results enter as a unit: the likelihood is tempered by d = J / H, the
  deal-clustered variance of the bots' score (each deal's share with its leverage undone, as if the deal
  had been left out of the fit) over the model's curvature (``design_effect``), measured at the untempered
  fit. This is the magnitude adjustment of a composite likelihood, the analytic form of resampling whole
  deals; it is 1 for independent duels, above 1 when rotations repeat each other's results, and below 1
  for multiplayer races, whose k - 1 pairs per seat (weighted 1 / (k - 1)) carry more than one game's
  information.

Intervals: per bot, the central quantiles of the mixture's marginal for the rating relative to its group's
reference (``reference``: the mean of the group, the bots linked by a chain of matches (``groups``), each
weighted by its Fisher information, so a newcomer with one match barely moves it), on which the table's
modes are centred. Rank ranges: percentiles of each bot's rank over joint draws from the posterior (95 %
ranges, correlations included). LOS of a bot over the next: Phi(difference / sd of the difference).

The large-board path (``exact=False``) fits the same model but, while it searches tau, approximates A^-1's
diagonal and log det A to second order in A's off-diagonal part (O(N^2) instead of N^3), takes tau's error
bar from MacKay's formula instead of two more fits, and factors A exactly once, at the central spread. At
1,000 bots and 100,000 four-player matches that is about 0.35 s of CPU: seven (mode, curvature) states of
the spread search (the untempered one, read only for d, stops at ``DESIGN_TAU_TOLERANCE``), the design
effect, one Cholesky and one triangular inverse (docs/benchmarks.md has the profile).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from statistics import NormalDist

import numpy as np

from arena.ratings import dense, groups, reference
from arena.ratings.bradley_terry import ELO_PER_LOGIT
from arena.ratings.design_effect import design_effect
from arena.ratings.packed import PackedLog, PairTally

HYPER_BOTS = 5.0
HYPER_SD_ELO = 200.0
MIN_SD_ELO, MAX_SD_ELO = 10.0, 3000.0
TAU_TOLERANCE = 1e-10  # on log tau^2: the fitted Elo then moves by far less than 1e-6
DESIGN_TAU_TOLERANCE = 1e-6  # for the untempered fit, read only for d (the table moves by ~1e-8 Elo)
WARM_DESIGN_TAU_TOLERANCE = 1e-8  # from the last fit's spread (1e-6 there left a table 2e-6 Elo off a cold fit)
MAX_TAU_ITERATIONS = 60
SMOOTHING_ROUNDS = 3
LARGE_SMOOTHING_ROUNDS = 1  # each round is several N^2 passes; one takes most of the effect
CURVATURE_STEP = 0.2  # in log tau^2
MIN_SPREAD_SD, MAX_SPREAD_SD = 0.05, 1.0  # in log tau^2: below, one component; above, capped


@dataclass(frozen=True, eq=False)
class Curvature:
    """What the intervals need from A, the precision of the Gaussian approximation at one prior spread:
    the diagonal of A^-1 (uncentred), log det A, and, when computed exactly, inv(L) with L L^T = A."""

    variances: np.ndarray
    log_det: float
    inverse: np.ndarray | None
    a: np.ndarray


State = tuple[np.ndarray, "Curvature", float, float]  # mode, curvature, log tau^2, weight (or evidence)


@dataclass(frozen=True, eq=False)
class Component:
    """The Gaussian approximation at one prior spread: mode (logits, each group's reference at zero), the
    variance of each rating relative to its group's reference (``reference``), the prior's sd (Elo), the
    weight in the mixture, and a factor for joint draws: ``inverse`` (A^-1 = inverse^T inverse) scaled per
    bot by ``scale``."""

    mode: np.ndarray
    variances: np.ndarray
    prior_sd: float
    weight: float
    inverse: np.ndarray
    scale: np.ndarray


@dataclass(frozen=True, eq=False)
class Posterior:
    """The fitted posterior: a mixture over the prior's spread (its weights from the evidence; one component
    when the data pin the spread down), the central component's mode being the table's ratings."""

    components: tuple[Component, ...]
    design_effect: float
    group: np.ndarray  # each bot's comparison group (``groups.labels``)
    weights: np.ndarray  # each bot's weight in its group's reference (``reference.weights``): its interval's anchor
    spreads: tuple[float, float] | None = None  # log tau^2 found by the untempered and the tempered search

    @property
    def central(self) -> Component:
        return self.components[len(self.components) // 2]

    @property
    def mode(self) -> np.ndarray:
        return self.central.mode

    @property
    def prior_sd(self) -> float:
        return self.central.prior_sd

    def intervals(self, confidence: float) -> tuple[np.ndarray, np.ndarray]:
        """Per bot, the central ``confidence`` interval of the mixture's marginal (logits, reference 0)."""
        tail = (1.0 - confidence) / 2.0
        means = np.array([c.mode for c in self.components])
        sds = np.sqrt(np.maximum(np.array([c.variances for c in self.components]), 1e-300))
        weights = np.array([c.weight for c in self.components])[:, None]
        if len(self.components) == 1:
            z = NormalDist().inv_cdf(1.0 - tail)
            return means[0] - z * sds[0], means[0] + z * sds[0]

        def quantile(q: float) -> np.ndarray:
            low, high = (means - 9.0 * sds).min(axis=0), (means + 9.0 * sds).max(axis=0)
            for _ in range(50):  # bisection on the mixture's CDF, every bot at once
                middle = (low + high) / 2.0
                cdf = (weights * 0.5 * (1.0 + _erf((middle - means) / (sds * math.sqrt(2.0))))).sum(axis=0)
                below = cdf < q
                low, high = np.where(below, middle, low), np.where(below, high, middle)
            return (low + high) / 2.0

        return quantile(tail), quantile(1.0 - tail)

    def difference_variance(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """Variance of r_i - r_j over the mixture, for index arrays i, j."""
        means, variances = [], []
        for c in self.components:
            columns = c.inverse[:, i] * c.scale[i] - c.inverse[:, j] * c.scale[j]
            variances.append((columns**2).sum(axis=0))
            means.append(c.mode[i] - c.mode[j])
        weights = np.array([c.weight for c in self.components])[:, None]
        mean = (weights * np.array(means)).sum(axis=0)
        return (weights * (np.array(variances) + (np.array(means) - mean) ** 2)).sum(axis=0)

    def draws(self, gen: np.random.Generator, count: int) -> np.ndarray:
        """count x n joint draws from the mixture, each group's reference at zero like the modes."""
        n = len(self.mode)
        weights = np.array([c.weight for c in self.components])
        which = gen.choice(len(self.components), size=count, p=weights / weights.sum())
        z = gen.standard_normal((n, count))
        samples = np.empty((count, n))
        for k, c in enumerate(self.components):
            chosen = which == k
            samples[chosen] = (c.inverse.T @ z[:, chosen]).T * c.scale + c.mode
        return reference.centred(samples, self.group, self.weights)


_erf = np.vectorize(math.erf, otypes=[float])


def _state(log: PackedLog, pairs: PairTally, score: np.ndarray, precision: float, start: np.ndarray,
           exact: bool, games: np.ndarray | None = None) -> tuple[np.ndarray, Curvature]:
    """Mode and the (smoothed) curvature at one prior precision (``games``: score + score^T, if at hand)."""
    games = score + score.T if games is None else games
    if exact:
        r = dense.newton(score, precision, start)
    else:
        r, _ = dense.fit(log, replace(pairs, score=score), precision, start, None, 0, games=games)
    return r, curvature(score, r, precision, exact, games)


def curvature(score: np.ndarray, r: np.ndarray, precision: float, exact: bool,
              games: np.ndarray | None = None) -> Curvature:
    """A: the prior's precision plus each pair's curvature; its inverse's diagonal and log determinant.

    At the mode a pair's curvature is games p (1 - p), highest at p = 1/2, where shrinkage puts sparse bots,
    so the mode's curvature overstates what the data say and sparse bots' intervals came out narrow. Each
    pair's curvature is therefore averaged over the approximation itself (the difference d ~ N(mu, s^2):
    E[sigma'(d)] ~ kappa sigma'(kappa mu), kappa = (1 + pi s^2 / 8)^-1/2, MacKay's probit approximation),
    in a few rounds from the mode's curvature (a variational Gaussian's expected curvature).

    Exact (small boards): Cholesky and inverse every round. Large boards, where that is N^3 a round: the
    diagonal of A^-1 and log det A to second order in A's off-diagonal part (D the diagonal of A:
    1/D_i + sum_j A_ij^2 / (D_i^2 D_j), and sum log D_i - sum_ij A_ij^2 / (2 D_i D_j)), O(N^2), written as
    few whole-array passes as possible (this runs about six times per refit of a thousand bots)."""
    games = score + score.T if games is None else games
    if not exact:
        return _large_curvature(games, r, precision)
    mu = r[:, None] - r[None, :]
    kappa = np.ones_like(mu)
    for rounds in range(SMOOTHING_ROUNDS + 1):
        p = 1.0 / (1.0 + np.exp(-np.clip(kappa * mu, -dense.CLIP, dense.CLIP)))
        a = -games * kappa * p * (1.0 - p)
        a[np.diag_indices_from(a)] = precision - a.sum(axis=1)
        inverse = dense.triangular_inverse(np.linalg.cholesky(a))
        sigma = inverse.T @ inverse
        variances = np.diag(sigma).copy()
        log_det = -2.0 * float(np.log(np.diag(inverse)).sum())
        if rounds == SMOOTHING_ROUNDS:
            return Curvature(variances, log_det, inverse, a)
        spread = np.maximum(variances[:, None] + variances[None, :] - 2.0 * sigma, 0.0)
        kappa = 1.0 / np.sqrt(1.0 + math.pi * spread / 8.0)
    raise AssertionError("unreachable")


def _large_curvature(games: np.ndarray, r: np.ndarray, precision: float) -> Curvature:
    """``curvature`` on the large-board path. Same formulas, fewer passes over the N x N arrays:
    p (1 - p) = 1 / (2 + 2 cosh x), kappa from one outer sum, sum_j A_ij^2 / D_j as one product."""
    n = len(r)
    diagonal_cells = np.diag_indices(n)
    kappa: np.ndarray | None = None
    for rounds in range(LARGE_SMOOTHING_ROUNDS + 1):
        x = np.subtract.outer(r, r)
        if kappa is not None:
            x *= kappa
        np.clip(x, -dense.CLIP, dense.CLIP, out=x)
        np.cosh(x, out=x)
        x += 1.0
        a = np.multiply(games, kappa, out=kappa) if kappa is not None else games.copy()
        a /= x
        a *= -0.5  # -games kappa p (1 - p)
        diagonal = precision - a.sum(axis=1)  # games is zero on the diagonal, and so is a
        a[diagonal_cells] = diagonal
        np.multiply(a, a, out=x)
        x[diagonal_cells] = 0.0
        ratio = x @ (1.0 / diagonal)  # sum_j A_ij^2 / D_j, j != i
        variances = 1.0 / diagonal + ratio / diagonal**2
        if rounds == LARGE_SMOOTHING_ROUNDS:
            log_det = float(np.log(diagonal).sum() - 0.5 * (ratio / diagonal).sum())
            return Curvature(variances, log_det, None, a)
        half = math.pi / 8.0 * variances
        kappa = np.add.outer(half, half + 1.0, out=x)
        np.sqrt(kappa, out=kappa)
        np.reciprocal(kappa, out=kappa)
    raise AssertionError("unreachable")


def fit(log: PackedLog, pairs: PairTally, start: np.ndarray, *, prior_sd: float | None = None,
        exact: bool = True, spreads: tuple[float, float] | None = None) -> Posterior:
    """The posterior of one board: prior sd fitted unless given (Elo), deals tempered, the mixture over the
    prior's spread where the data leave it uncertain (see the module docstring). ``spreads``: the last fit's
    ``Posterior.spreads``, where the two searches of log tau^2 start (same fixed points, fewer states)."""
    d = 1.0
    fixed = prior_sd is not None
    t = 2.0 * math.log((prior_sd if fixed else initial_sd(start)) / ELO_PER_LOGIT)  # log tau^2, logits
    r = start.copy()
    all_games = pairs.score + pairs.score.T
    found, warm = [], spreads if spreads is not None and all(map(math.isfinite, spreads)) else None
    for tempered in (False, True):  # d is measured at the untempered fit, then the fit is redone with it
        score, games = (pairs.score / d, all_games / d) if tempered else (pairs.score, all_games)
        if fixed:
            r, state = _state(log, pairs, score, math.exp(-t), r, exact, games)
        else:
            tolerance = TAU_TOLERANCE if tempered else WARM_DESIGN_TAU_TOLERANCE if warm else DESIGN_TAU_TOLERANCE
            t, r, state = _fit_tau(log, pairs, score, games, warm[tempered] if warm else t, r, exact, tolerance)
            found.append(t)
        if tempered:
            break
        d = design_effect(log, pairs, r, state.inverse, state.variances)
    states = [(r, state, t, 1.0)] if fixed else _spread_mixture(log, pairs, score, games, t, r, state, exact)
    group = groups.labels(all_games)
    weights = reference.weights(all_games, states[len(states) // 2][0], group)
    return Posterior(_components(states, exact, group, weights), d, group, weights,
                     None if fixed else (found[0], found[1]))


def _components(states: list[State], exact: bool, group: np.ndarray, weights: np.ndarray,
                ) -> tuple[Component, ...]:
    """Components from (mode, curvature, log tau^2, weight): modes and each bot's variance relative to its
    group's reference (``weights``: the same for every component, so the mixture is of one quantity). On the
    large-board path only the central one is factored exactly; the others scale its factor per bot by their
    approximate variances' ratio."""
    n = len(states[0][0])
    _, central, _, _ = states[len(states) // 2]
    inverse = central.inverse
    if inverse is None:
        inverse = dense.triangular_inverse(np.linalg.cholesky(central.a))
    exact_central = reference.relative_variances(inverse, group, weights)
    out = []
    for r, state, t, weight in states:
        mode = reference.centred(r, group, weights)
        sd = ELO_PER_LOGIT * math.exp(t / 2.0)
        if exact and state.inverse is not None:
            variances = reference.relative_variances(state.inverse, group, weights)
            out.append(Component(mode, variances, sd, weight, state.inverse, np.ones(n)))
        else:
            ratio = state.variances / central.variances
            out.append(Component(mode, exact_central * ratio, sd, weight, inverse, np.sqrt(ratio)))
    return tuple(out)


def log_evidence(score: np.ndarray, t: float, r: np.ndarray, state: Curvature) -> float:
    """Laplace approximation of log p(log | tau) + log hyperprior(tau), up to a constant (t = log tau^2)."""
    p = dense._probabilities(r)
    likelihood = float((score * np.log(p)).sum())
    hyper = HYPER_BOTS * (HYPER_SD_ELO / ELO_PER_LOGIT) ** 2
    return likelihood - 0.5 * float(r @ r) * math.exp(-t) - 0.5 * len(r) * t - 0.5 * state.log_det \
        - 0.5 * hyper * math.exp(-t) - 0.5 * HYPER_BOTS * t


def _spread_mixture(log: PackedLog, pairs: PairTally, score: np.ndarray, games: np.ndarray, t: float,
                    mode: np.ndarray, state: Curvature, exact: bool) -> list[State]:
    """States at t + k h (k = -2..2, h the sd of log tau^2 from the evidence's curvature at t), weighted
    by their evidence; just the central one when h < ``MIN_SPREAD_SD`` (the data pin tau down)."""
    at_centre = log_evidence(score, t, mode, state)
    if exact:
        values = {}
        for step in (-CURVATURE_STEP, CURVATURE_STEP):
            r, other = _state(log, pairs, score, math.exp(-(t + step)), mode, exact, games)
            values[step] = log_evidence(score, t + step, r, other)
        bend = (values[-CURVATURE_STEP] - 2.0 * at_centre + values[CURVATURE_STEP]) / CURVATURE_STEP**2
        h = MAX_SPREAD_SD if bend >= 0 else min(MAX_SPREAD_SD, 1.0 / math.sqrt(-bend))
    else:  # MacKay's error bar, var(log tau^2) ~ 2 / gamma, instead of two more fits
        gamma = max(0.0, len(mode) - (float(state.variances.sum()) + math.exp(t)) * math.exp(-t))
        h = min(MAX_SPREAD_SD, math.sqrt(2.0 / (HYPER_BOTS + gamma)))
    if h < MIN_SPREAD_SD:
        return [(mode, state, t, 1.0)]
    states = []
    for k in (-2, -1, 0, 1, 2):
        if k == 0:
            r, other, value = mode, state, at_centre
        else:
            r, other = _state(log, pairs, score, math.exp(-(t + k * h)), mode, exact, games)
            value = log_evidence(score, t + k * h, r, other)
        states.append((r, other, t + k * h, value))
    top = max(value for *_, value in states)
    weights = [math.exp(value - top) for *_, value in states]
    total = sum(weights)
    return [(r, other, tk, w / total) for (r, other, tk, _), w in zip(states, weights, strict=True)]


def initial_sd(start: np.ndarray) -> float:
    """A first guess of the prior sd (Elo): the spread of the stored ratings, else the hyperprior's."""
    if len(start) > 2 and start.std() > 0:
        return float(np.clip(ELO_PER_LOGIT * start.std(), MIN_SD_ELO, MAX_SD_ELO))
    return HYPER_SD_ELO


def _fit_tau(log: PackedLog, pairs: PairTally, score: np.ndarray, games: np.ndarray, t: float, r: np.ndarray,
             exact: bool, tolerance: float) -> tuple[float, np.ndarray, Curvature]:
    """Solve t = log tau^2 = g(t) (MacKay's update, see the module docstring) by the secant method on
    g(t) - t, falling back to the plain update when a secant step leaves the bracket of sane spreads."""
    n = len(r)
    hyper = HYPER_BOTS * (HYPER_SD_ELO / ELO_PER_LOGIT) ** 2
    bounds = (2.0 * math.log(MIN_SD_ELO / ELO_PER_LOGIT), 2.0 * math.log(MAX_SD_ELO / ELO_PER_LOGIT))

    def update(t: float, start: np.ndarray) -> tuple[float, np.ndarray, Curvature]:
        r, state = _state(log, pairs, score, math.exp(-t), start, exact, games)
        trace = float(state.variances.sum()) + (0.0 if exact else math.exp(t))  # + the mean direction's 1/P
        gamma = max(0.0, n - trace * math.exp(-t))
        return math.log((hyper + float(r @ r)) / (HYPER_BOTS + gamma)), r, state

    previous: tuple[float, float] | None = None
    modes: list[tuple[float, np.ndarray]] = []  # (t, mode) of the last two states
    for _ in range(MAX_TAU_ITERATIONS):
        start = r
        # the mode extrapolated along t, a warm start a Newton step closer, while the steps in t shrink (a
        # long jump in t would extrapolate a line far beyond where it holds)
        if not exact and len(modes) == 2 and 0.0 < abs(t - modes[1][0]) <= abs(modes[1][0] - modes[0][0]):
            (t0, r0), (t1, r1) = modes
            start = r1 + (t - t1) * (r1 - r0) / (t1 - t0)
        target, r, state = update(t, start)
        modes = [*modes[-1:], (t, r)]
        residual = target - t
        if abs(residual) < tolerance:
            return t, r, state
        if (t <= bounds[0] and target < t) or (t >= bounds[1] and target > t):
            return t, r, state  # the data ask for a spread beyond the sane range: keep its edge
        following = target
        if previous is not None and residual != previous[1]:
            secant = t - residual * (t - previous[0]) / (residual - previous[1])
            if bounds[0] <= secant <= bounds[1]:
                following = secant
        previous = (t, residual)
        t = min(max(following, bounds[0]), bounds[1])
    raise ArithmeticError("the prior's spread did not converge")
