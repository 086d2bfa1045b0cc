"""SPRT: the normal-approximation GSPRT against hand-computed numbers."""

from __future__ import annotations

import math

import pytest

from arena.ratings.sprt import ACCEPT_H0, ACCEPT_H1, CONTINUE, Sprt


def feed(test: Sprt, wins: int, draws: int, losses: int) -> Sprt:
    for score, times in ((1.0, wins), (0.5, draws), (0.0, losses)):
        for _ in range(times):
            test.add(score)
    return test


def test_trinomial_llr_by_hand() -> None:
    """10 wins, 5 draws, 5 losses; elo0 = 0, elo1 = 10. s0 = 0.5, s1 = 1 / (1 + 10^(-10/400)) = 0.5143872.
    Mean m = (10 + 2.5) / 20 = 0.625; E[x^2] = (10 + 5/4) / 20 = 0.5625, so v = 0.5625 - 0.390625 = 0.171875.
    LLR = 20 * (s1 - s0) * (2m - s0 - s1) / (2v) = 20 * 0.0143872 * 0.2356128 / 0.34375 = 0.197225.
    Bounds with alpha = beta = 0.05: ln(0.05 / 0.95) = -2.944439 and +2.944439."""
    status = feed(Sprt(0.0, 10.0), 10, 5, 5).status()
    assert status.units == 20 and status.mean == 0.625
    assert status.llr == pytest.approx(0.197225, abs=1e-6)
    assert status.lower == pytest.approx(-2.944439, abs=1e-6)
    assert status.upper == pytest.approx(2.944439, abs=1e-6)
    assert status.decision == CONTINUE


def test_pentanomial_llr_by_hand() -> None:
    """20 colour-swapped pairs: 4 WW (1), 4 WD (0.75), 6 WL (0.5), 4 DL (0.25), 2 LL (0). Mean 11/20 = 0.55;
    E[x^2] = (4 + 2.25 + 1.5 + 0.25) / 20 = 0.4, v = 0.4 - 0.3025 = 0.0975.
    LLR = 20 * 0.0143872 * (1.1 - 1.0143872) / 0.195 = 0.126331."""
    test = Sprt(0.0, 10.0)
    for pair, times in (((1, 1), 4), ((1, 0.5), 4), ((1, 0), 3), ((0, 1), 3), ((0.5, 0), 4), ((0, 0), 2)):
        for _ in range(times):
            test.add_pair(*pair)
    status = test.status()
    assert status.units == 20 and status.mean == pytest.approx(0.55)
    assert status.llr == pytest.approx(0.126331, abs=1e-6)


def test_decisions() -> None:
    """elo0 = 0, elo1 = 50: s1 = 0.5714631. Wins/losses only, v = m (1 - m).
    60-40: LLR = 100 * 0.0714631 * (1.2 - 1.0714631) / 0.48 = 1.913676 -> continue;
    120-80: twice that, 3.827353 >= 2.944 -> H1; 40-60: 100 * 0.0714631 * (0.8 - 1.0714631) / 0.48 =
    -4.041583 <= -2.944 -> H0."""
    assert feed(Sprt(0, 50), 60, 0, 40).status().llr == pytest.approx(1.913676, abs=1e-6)
    assert feed(Sprt(0, 50), 60, 0, 40).status().decision == CONTINUE
    assert feed(Sprt(0, 50), 120, 0, 80).status().llr == pytest.approx(3.827353, abs=1e-6)
    assert feed(Sprt(0, 50), 120, 0, 80).status().decision == ACCEPT_H1
    assert feed(Sprt(0, 50), 40, 0, 60).status().llr == pytest.approx(-4.041583, abs=1e-6)
    assert feed(Sprt(0, 50), 40, 0, 60).status().decision == ACCEPT_H0


def test_other_error_rates_move_the_bounds() -> None:
    status = Sprt(0, 10, alpha=0.05, beta=0.1).status()
    assert status.lower == pytest.approx(math.log(0.1 / 0.95))
    assert status.upper == pytest.approx(math.log(0.9 / 0.05))


def test_sprt_regression_a_bot_winning_every_game_was_never_accepted() -> None:
    """Bug: with no spread in the scores the LLR was reported as 0, so a bot that won every pair ran on
    until its first non-win (66 pairs in a real run). With the pseudo-unit (1/2 at 0, 1/2 at 1), n wins give
    mean m = (n + .5)/(n + 1), variance m(1 - m), and the LLR crosses 2.944 at n = 14 (by hand:
    n = 13 -> 2.70, n = 14 -> 3.10 with s1 - s0 = 0.014391)."""
    sprt = Sprt(0, 10)
    decided_at = None
    for n in range(1, 40):
        sprt.add(1.0)
        if sprt.status().decision != "continue":
            decided_at = n
            break
    assert decided_at == 14 and sprt.status().decision == "H1"
    assert feed(Sprt(0, 10), 5, 0, 0).status().llr == pytest.approx(0.46272, abs=1e-4)


def test_nothing_but_draws_accepts_h0_slowly() -> None:
    sprt = Sprt(0, 10)
    while sprt.status().decision == "continue" and sprt.status().units < 200:
        sprt.add(0.5)
    assert sprt.status().decision == "H0" and sprt.status().units == 84

def test_refused_inputs() -> None:
    test = Sprt(0, 10)
    test.add(1)
    with pytest.raises(ValueError, match="not both"):
        test.add_pair(1, 0)
    with pytest.raises(ValueError):
        test.add(0.7)
    with pytest.raises(ValueError):
        Sprt(10, 0)
    with pytest.raises(ValueError):
        Sprt(0, 10, alpha=0.6, beta=0.5)
