"""Arena Elo point fit: hand-solved cases, the prior, order independence, pair weights."""

from __future__ import annotations

import math
import random

import pytest

from arena.ratings import ONE_LOSER, RANKED, MatchOutcome, arena_elo, tally
from arena.ratings.bradley_terry import (
    ELO_PER_LOGIT,
    fit_logits,
    gradient_and_hessian,
    precision_for,
)


def duel(winner: str, loser: str) -> MatchOutcome:
    return MatchOutcome((winner, loser), (1, 2), RANKED)


def bisect(f, low: float, high: float) -> float:
    """Root of an increasing f on [low, high]."""
    for _ in range(200):
        mid = (low + high) / 2
        low, high = (mid, high) if f(mid) < 0 else (low, mid)
    return (low + high) / 2


def test_two_bots_without_prior_match_the_closed_form() -> None:
    """A beats B 3 times of 4. The MLE has sigma(d) = 3/4, d = ln 3 logits = 400 log10(3) = 190.85 Elo,
    and the pool mean is pinned at 1500, so A = 1595.42 and B = 1404.58."""
    log = [duel("A", "B")] * 3 + [duel("B", "A")]
    elo = arena_elo(log, prior_sd=None)
    assert elo["A"] - elo["B"] == pytest.approx(400 * math.log10(3), abs=1e-9)
    assert elo["A"] == pytest.approx(1500 + 200 * math.log10(3), abs=1e-9)


def test_a_star_of_two_duels_solves_each_duel_separately() -> None:
    """B plays A (A wins 3:1) and C (B wins 3:1), A and C never meet. The log-likelihood is the sum of two
    two-bot terms in r_A - r_B and r_B - r_C, so each difference is ln 3: A = 1500 + 190.85, B = 1500,
    C = 1500 - 190.85 (mean 1500)."""
    log = [duel("A", "B")] * 3 + [duel("B", "A")] + [duel("B", "C")] * 3 + [duel("C", "B")]
    elo = arena_elo(log, prior_sd=None)
    gap = 400 * math.log10(3)
    assert elo == pytest.approx({"A": 1500 + gap, "B": 1500.0, "C": 1500 - gap}, abs=1e-9)


@pytest.mark.parametrize("prior_sd", [None, 400.0])
def test_a_symmetric_cycle_gives_equal_ratings(prior_sd: float | None) -> None:
    """A>B, B>C, C>A once each: the objective is symmetric under the cycle and strictly concave (up to the
    shift fixed by the mean), so its one optimum has A = B = C = 1500."""
    elo = arena_elo([duel("A", "B"), duel("B", "C"), duel("C", "A")], prior_sd=prior_sd)
    assert elo == pytest.approx({"A": 1500.0, "B": 1500.0, "C": 1500.0}, abs=1e-9)


def test_one_win_with_the_prior_solves_the_hand_derived_equation() -> None:
    """A beats B once; prior r ~ N(0, tau^2) with tau = 400 Elo = ln 10 logits. By symmetry r_A = -r_B = x,
    the log-posterior is log sigma(2x) - x^2 / tau^2, and its derivative vanishes where
    sigma(-2x) = x / tau^2. Bisection on that gives x = 0.8371 logits: A = 1500 + 145.41 Elo."""
    tau2 = math.log(10) ** 2
    x = bisect(lambda x: x / tau2 - 1 / (1 + math.exp(2 * x)), 0.0, 5.0)
    elo = arena_elo([duel("A", "B")])
    assert elo["A"] == pytest.approx(1500 + ELO_PER_LOGIT * x, abs=1e-9)
    assert elo["B"] == pytest.approx(1500 - ELO_PER_LOGIT * x, abs=1e-9)
    assert elo["A"] - 1500 == pytest.approx(145.41, abs=0.005)


def test_four_player_one_loser_example() -> None:
    """Two Piranha Pedro games of A, B, C, D: D loses the first, C the second. Pairs (weight 1/3 each):
    A>D, B>D, C>D, then A>C, B>C, D>C. A and B are alike (two wins, no loss) and so are C and D (one win
    each against the other, three losses each), so r_A = r_B = x, r_C = r_D = -x. A's gradient:
    2/3 - (2/3) sigma(2x) - x / tau^2 = 0, i.e. (2/3) sigma(-2x) = x / tau^2 (C's gives the same), so
    x = 0.6996 logits: A = B = 1621.54, C = D = 1378.46."""
    log = [
        MatchOutcome(("A", "B", "C", "D"), (1, 1, 1, 4), ONE_LOSER),
        MatchOutcome(("A", "B", "C", "D"), (1, 1, 4, 1), ONE_LOSER),
    ]
    counts = tally(log)
    third = pytest.approx(1 / 3)
    assert counts.wins == [2, 2, 1, 1] and counts.losses == [0, 0, 3, 3] and counts.draws == [0, 0, 0, 0]
    assert counts.score[0] == [0.0, 0.0, third, third]  # A took 1/3 from C and from D, nothing from B
    tau2 = math.log(10) ** 2
    x = bisect(lambda x: x / tau2 - (2 / 3) / (1 + math.exp(2 * x)), 0.0, 5.0)
    elo = arena_elo(log)
    expected = {"A": x, "B": x, "C": -x, "D": -x}
    assert elo == pytest.approx({bot: 1500 + ELO_PER_LOGIT * r for bot, r in expected.items()}, abs=1e-9)
    assert elo["A"] == pytest.approx(1621.54, abs=0.005)


def random_log(seed: int, bots: int = 12, matches: int = 300, seats: int = 4) -> list[MatchOutcome]:
    rng = random.Random(seed)
    log = []
    for _ in range(matches):
        table = rng.sample(range(bots), seats)
        ranks = tuple(rng.choice([1, 2, 2, 3, 4]) for _ in table)
        log.append(MatchOutcome(tuple(table), ranks, RANKED))
    return log


def test_shuffling_the_log_changes_nothing() -> None:
    log = random_log(1)
    elo = arena_elo(log)
    shuffled = list(log)
    random.Random(2).shuffle(shuffled)
    assert arena_elo(shuffled) == pytest.approx(elo, abs=1e-9)


def test_unbeaten_and_winless_bots_stay_finite() -> None:
    """A wins every game, Z loses every game: no MLE exists (refused without a prior), the prior keeps both
    finite, ordered, and the pool mean stays at 1500."""
    log = [duel("A", bot) for bot in "BCZ"] * 5 + [duel(bot, "Z") for bot in "BC"] * 5
    log += [duel("B", "C"), duel("C", "B")]
    with pytest.raises(ValueError, match="no finite maximum likelihood"):
        arena_elo(log, prior_sd=None)
    elo = arena_elo(log)
    assert all(math.isfinite(value) for value in elo.values())
    assert elo["A"] > elo["B"] > elo["Z"] and elo["A"] > elo["C"] > elo["Z"]
    assert sum(elo.values()) / len(elo) == pytest.approx(1500.0, abs=1e-9)


def test_the_fit_is_a_tight_stationary_point_with_mean_1500() -> None:
    """Converged: the log-posterior gradient is ~0 at the fit, and the Gaussian prior pins the mean."""
    counts = tally(random_log(3, bots=20, matches=500))
    precision = precision_for(400.0)
    r = fit_logits(counts.score, precision)
    grad, _ = gradient_and_hessian(counts.score, r, precision)
    assert max(map(abs, grad)) < 1e-9
    assert abs(sum(r)) < 1e-12


def test_a_k_player_match_weighs_like_one_game_per_player() -> None:
    """Pair weight 1/(k-1): two three-player matches A>B>C sum to exactly the score matrix (and the fit) of
    three two-player games A>B, A>C, B>C."""
    three = [MatchOutcome(("A", "B", "C"), (1, 2, 3), RANKED)] * 2
    two = [duel("A", "B"), duel("A", "C"), duel("B", "C")]
    assert tally(three).score == tally(two).score
    assert arena_elo(three) == pytest.approx(arena_elo(two), abs=1e-12)


def test_bot_ids_of_mixed_types_are_accepted() -> None:
    elo = arena_elo([MatchOutcome((1, "one"), (1, 2)), MatchOutcome(("one", 1), (1, 2))])
    assert elo == pytest.approx({1: 1500.0, "one": 1500.0})


def test_a_non_positive_prior_is_refused() -> None:
    with pytest.raises(ValueError):
        arena_elo([duel("A", "B")], prior_sd=0.0)
