"""The posterior intervals: honest for bots with few matches, deals counted as units, the old collapse gone."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from arena.ratings import MatchOutcome, leaderboard, posterior
from arena.ratings.bradley_terry import ELO_PER_LOGIT
from arena.ratings.packed import pack, pair_tally
from bench import ratings_quality as quality


def test_bots_with_one_or_two_matches_are_covered_about_95_percent_of_the_time() -> None:
    """12 simulated ladder boards (60 bots, strengths ~ N(0, 200 Elo), two-player races; twelve bots each
    with about 100, 20, 5, 2 and 1 matches): the bots with 1 or 2 matches (288 of them) hold their true
    strength inside their 95 % interval 89-99 % of the time (binomial sd 1.3 %). The bootstrap this replaced
    covered 54 % and 77 % of them."""
    score = quality.Score.empty()
    for seed in range(12):
        board = quality.ladder_board(500 + seed, 2)
        score.add(board, leaderboard(board.log, rng=random.Random(seed), resamples=10))
    sparse = (score.inside[1] + score.inside[2]) / (score.total[1] + score.total[2])
    assert score.total[1] + score.total[2] >= 250
    assert 0.89 <= sparse <= 0.99


def test_one_win_no_longer_excludes_every_below_average_strength() -> None:
    """Regression (the bootstrap's collapse): a new bot that won its only match against an average bot of a
    settled board got an interval starting at the pool mean, as if a single win proved it above average.
    Its interval now reaches well below the mean (a Plackett-Luce win against an equal opponent happens
    half the time, so one win says little), and its rating sits above the mean but not far above."""
    rng = random.Random(3)
    old = [f"b{i}" for i in range(10)]
    strength = {bot: rng.gauss(0.0, 200 / ELO_PER_LOGIT) for bot in old}
    log = [quality.race(rng, strength.__getitem__, rng.sample(old, 2)) for _ in range(400)]
    table = {row.bot: row for row in leaderboard(log, rng=random.Random(1))}
    average = min(old, key=lambda bot: abs(table[bot].elo - 1500.0))
    newcomer = {row.bot: row for row in leaderboard([*log, MatchOutcome(("new", average), (1, 2))],
                                                  rng=random.Random(1))}["new"]
    assert newcomer.games == 1 and newcomer.provisional
    assert newcomer.elo_low < 1500.0 - 150.0
    assert 1500.0 < newcomer.elo < 1500.0 + 150.0 < newcomer.elo_high


def test_the_rotations_of_one_deal_count_as_one_unit() -> None:
    """A log in which every match is played three times over with the very same result, the copies grouped
    as one deal, teaches no more than the log once: its intervals stay as wide as the single log's (within
    10 %), while the copies counted as independent matches would shrink them by about sqrt(3)."""
    rng = random.Random(8)
    bots = [f"b{i}" for i in range(12)]
    strength = {bot: rng.gauss(0.0, 200 / ELO_PER_LOGIT) for bot in bots}
    once = [quality.race(rng, strength.__getitem__, rng.sample(bots, 3)) for _ in range(150)]
    tripled = [MatchOutcome(m.bots, m.ranks, m.kind, number) for number, m in enumerate(once) for _ in range(3)]
    independent = [MatchOutcome(m.bots, m.ranks, m.kind) for m in tripled]

    def widths(log: list[MatchOutcome]) -> np.ndarray:
        table = sorted(leaderboard(log, rng=random.Random(2), resamples=10), key=lambda row: row.bot)
        return np.array([row.elo_high - row.elo_low for row in table])

    ratio = widths(tripled) / widths(once)
    assert 0.9 <= float(np.median(ratio)) <= 1.1
    assert float(np.median(widths(independent) / widths(once))) < 0.7


def test_the_design_effect_is_one_for_independent_two_player_matches() -> None:
    """Independent duels: observed and modelled information agree (d near 1), whereas rotations that
    repeat their deal's result half the time show up as d above 1 once given as deals."""
    board = quality.ladder_board(77, 2)
    log = pack(board.log)
    pairs = pair_tally(log)
    fitted = posterior.fit(log, pairs, np.zeros(len(log.bots)))
    assert 0.85 <= fitted.design_effect <= 1.15
    deals = pack(quality.deal_board(77, 2).log)
    assert posterior.fit(deals, pair_tally(deals), np.zeros(len(deals.bots))).design_effect > 1.25


def test_the_prior_spread_is_fitted_to_the_board() -> None:
    """Two boards whose strengths spread by 100 and by 400 Elo get priors of about those spreads."""
    for spread in (100.0, 400.0):
        rng = random.Random(int(spread))
        bots = [f"b{i}" for i in range(40)]
        strength = {bot: rng.gauss(0.0, spread / ELO_PER_LOGIT) for bot in bots}
        log = pack([quality.race(rng, strength.__getitem__, rng.sample(bots, 2)) for _ in range(2000)])
        fitted = posterior.fit(log, pair_tally(log), np.zeros(len(log.bots)))
        realised = ELO_PER_LOGIT * float(np.std(list(strength.values())))
        assert 0.75 * realised <= fitted.prior_sd <= 1.3 * realised


def test_the_large_board_curvature_follows_its_formulas() -> None:
    """The large path's curvature (written in few whole-array passes for speed) against its docstring's
    formulas spelt out pair by pair: one smoothing round of kappa_ij = (1 + pi (v_i + v_j) / 8)^-1/2, then
    A_ij = -games_ij kappa_ij sigma'(kappa_ij (r_i - r_j)), D = diag A, v_i = 1 / D_i + sum_j A_ij^2 /
    (D_i^2 D_j) and log det A ~ sum log D_i - sum_ij A_ij^2 / (2 D_i D_j)."""
    gen = np.random.default_rng(4)
    n, precision = 7, 0.8
    score = np.triu(gen.integers(0, 4, (n, n)) * 0.5, 1) + np.tril(gen.integers(0, 3, (n, n)) * 0.5, -1)
    games = score + score.T
    r = gen.normal(0.0, 1.5, n)

    def sigma_prime(x: float) -> float:
        p = 1.0 / (1.0 + math.exp(-x))
        return p * (1.0 - p)

    kappa = [[1.0] * n for _ in range(n)]
    for _ in range(2):
        a = [[-games[i, j] * kappa[i][j] * sigma_prime(kappa[i][j] * (r[i] - r[j])) if i != j else 0.0
              for j in range(n)] for i in range(n)]
        d = [precision - sum(a[i]) for i in range(n)]
        off = [sum(a[i][j] ** 2 / d[j] for j in range(n) if j != i) for i in range(n)]
        v = [1.0 / d[i] + off[i] / d[i] ** 2 for i in range(n)]
        kappa = [[(1.0 + math.pi * (v[i] + v[j]) / 8.0) ** -0.5 for j in range(n)] for i in range(n)]
    large = posterior.curvature(score, r, precision, exact=False)
    assert np.allclose(large.variances, v, rtol=1e-12, atol=0.0)
    log_det = sum(math.log(x) for x in d) - 0.5 * sum(o / x for o, x in zip(off, d, strict=True))
    assert large.log_det == pytest.approx(log_det, rel=1e-12)
    assert np.allclose(np.diag(large.a), d, rtol=1e-12) and large.inverse is None


def test_a_large_fit_searched_from_the_last_spreads_finds_the_same_posterior(monkeypatch) -> None:
    """A refit starts the searches of the prior's spread at the last fit's (``spreads``): from there, or
    from spreads a little off (a few more matches since), the same mode, spreads and intervals as a fit
    that searched from scratch, in fewer (mode, curvature) states when nothing changed."""
    log = pack(quality.deal_board(5, 3).log)
    pairs = pair_tally(log)
    start = np.zeros(len(log.bots))
    states = []
    real_state = posterior._state
    monkeypatch.setattr(posterior, "_state", lambda *a, **k: states.append(1) or real_state(*a, **k))
    cold = posterior.fit(log, pairs, start, exact=False)
    cold_states = len(states)
    assert cold.spreads is not None
    for spreads in (cold.spreads, (cold.spreads[0] + 0.05, cold.spreads[1] - 0.05)):
        states.clear()
        warm = posterior.fit(log, pairs, start, exact=False, spreads=spreads)
        assert warm.spreads is not None and np.allclose(warm.spreads, cold.spreads, atol=1e-6)
        assert np.abs(warm.mode - cold.mode).max() * ELO_PER_LOGIT < 1e-6
        for mine, theirs in zip(warm.intervals(0.95), cold.intervals(0.95), strict=True):
            assert np.abs(mine - theirs).max() * ELO_PER_LOGIT < 1e-4
        if spreads == cold.spreads:
            assert len(states) < cold_states
    assert posterior.fit(log, pairs, start, prior_sd=150.0, exact=False).spreads is None  # nothing searched
