"""The leaderboard table: bootstrap intervals, rank ranges, LOS, and interval coverage by simulation."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from arena.ratings import ONE_LOSER, RANKED, MatchOutcome, arena_elo, leaderboard, tally
from arena.ratings.bootstrap import batch_fit, resample_counts, resampled_scores
from arena.ratings.bradley_terry import ELO_PER_LOGIT, fit_logits, precision_for
from arena.ratings.leaderboard import likelihood_of_superiority, percentile, rank_ranges


def race(rng: random.Random, strength: dict, table: list) -> MatchOutcome:
    """A Plackett-Luce finish: bot i finishes after an exponential time of rate e^{r_i}, so any two bots'
    order follows Bradley-Terry exactly, whoever else sits at the table."""
    finish = sorted(table, key=lambda bot: rng.expovariate(math.exp(strength[bot])))
    return MatchOutcome(tuple(table), tuple(finish.index(bot) + 1 for bot in table), RANKED)


def simulated_log(seed: int, bots: int = 8, matches: int = 120) -> tuple[dict, list[MatchOutcome]]:
    rng = random.Random(seed)
    strength = {f"b{i}": rng.gauss(0.0, 150 / ELO_PER_LOGIT) for i in range(bots)}
    return strength, [race(rng, strength, rng.sample(sorted(strength), 4)) for _ in range(matches)]


def test_percentile_interpolates_between_order_statistics() -> None:
    """q = 0.25 of [1, 2, 3, 4]: position 0.75 between 1 and 2 -> 1.75 (numpy's default 'linear')."""
    assert percentile([1.0, 2.0, 3.0, 4.0], 0.25) == 1.75
    assert percentile([1.0, 2.0, 3.0, 4.0], 1.0) == 4.0
    assert percentile([5.0], 0.975) == 5.0


def test_rank_ranges_from_overlapping_intervals() -> None:
    """A [1600, 1700] and B [1550, 1650] overlap: each could be 1st or 2nd. C [1400, 1500] and D [1300, 1450]
    overlap each other only: both are surely behind A and B (their lows 1600, 1550 are above C's and D's
    highs), so 3rd or 4th. E [1500, 1550] only touches F [1550, 1600]: touching counts as overlap."""
    low = [1600, 1550, 1400, 1300]
    high = [1700, 1650, 1500, 1450]
    assert rank_ranges(low, high) == [(1, 2), (1, 2), (3, 4), (3, 4)]
    assert rank_ranges([1500, 1550], [1550, 1600]) == [(1, 2), (1, 2)]


def test_likelihood_of_superiority_is_the_normal_approximation() -> None:
    """Fitted difference 10 Elo; bootstrap differences [0, 20] have sd sqrt(200): LOS = Phi(10 / 14.142)
    = Phi(0.7071) = 0.7602."""
    assert likelihood_of_superiority(10.0, [0.0, 20.0]) == pytest.approx(0.760250, abs=1e-6)
    assert likelihood_of_superiority(5.0, [5.0, 5.0]) == 1.0
    assert likelihood_of_superiority(0.0, [1.0, -1.0]) == 0.5


def test_the_table_is_consistent() -> None:
    _, log = simulated_log(1)
    table = leaderboard(log, rng=random.Random(7), resamples=100)
    counts = tally(log)
    elo = arena_elo(log)
    assert [row.rank for row in table] == sorted(row.rank for row in table)
    assert [row.elo for row in table] == sorted((row.elo for row in table), reverse=True)
    for row in table:
        i = counts.bots.index(row.bot)
        assert row.elo == pytest.approx(elo[row.bot], abs=1e-9)
        assert (row.games, row.wins, row.draws, row.losses) == (
            counts.games[i], counts.wins[i], counts.draws[i], counts.losses[i]
        )
        assert row.elo_low < row.elo < row.elo_high
        assert row.rank_low <= row.rank <= row.rank_high
    assert all(0.5 <= row.los_next <= 1.0 for row in table[:-1])
    assert table[-1].los_next is None
    assert sum(row.games for row in table) == 4 * len(log)


def test_one_seed_fixes_the_table_whatever_the_order_of_the_log() -> None:
    _, log = simulated_log(2)
    shuffled = list(log)
    random.Random(3).shuffle(shuffled)
    assert leaderboard(log, rng=random.Random(5), resamples=50) == leaderboard(
        shuffled, rng=random.Random(5), resamples=50
    )


def test_a_one_loser_leaderboard() -> None:
    """Piranha Pedro style: the bot that loses most ends last; everyone gets an interval."""
    rng = random.Random(4)
    bots = ["p", "q", "r", "s", "t"]
    log = []
    for _ in range(60):
        table = rng.sample(bots, 4)
        loser = rng.choice(table + ["t"] * 3) if "t" in table else rng.choice(table)
        log.append(MatchOutcome(tuple(table), tuple(4 if bot == loser else 1 for bot in table), ONE_LOSER))
    table = leaderboard(log, rng=random.Random(1), resamples=60)
    assert table[-1].bot == "t"
    assert all(row.elo_low <= row.elo <= row.elo_high for row in table)


def test_refused_inputs() -> None:
    duel = MatchOutcome(("a", "b"), (1, 2))
    trio = MatchOutcome(("a", "b", "c"), (1, 2, 3))
    with pytest.raises(ValueError, match="player count"):
        leaderboard([duel, trio], rng=random.Random(1))
    with pytest.raises(ValueError, match="prior"):
        leaderboard([duel, duel], rng=random.Random(1), prior_sd=None)
    assert leaderboard([], rng=random.Random(1)) == []
    no_intervals = leaderboard([duel], rng=random.Random(1), resamples=0)
    assert [(row.elo_low, row.los_next) for row in no_intervals] == [(row.elo, None) for row in no_intervals]


def test_the_batch_solver_agrees_with_the_pure_one() -> None:
    """Summing the log with every match drawn once reproduces the score matrix; the numpy Newton from zero
    reaches the pure-Python fit; from the fit it stays there."""
    _, log = simulated_log(5, bots=10, matches=200)
    counts = tally(log)
    precision = precision_for(400.0)
    main = fit_logits(counts.score, precision)
    score = resampled_scores(counts, np.ones((1, counts.matches)))
    assert np.allclose(score[0], counts.score, atol=1e-12)
    from_zero = batch_fit(score, np.zeros((1, len(main))), precision)
    assert np.abs(from_zero[0] - main).max() < 1e-9
    assert np.abs(batch_fit(score, np.array([main]), precision)[0] - main).max() < 1e-9


def test_resamples_draw_as_many_matches_as_the_log_holds() -> None:
    counts = resample_counts(np.random.default_rng(1), 37, 500)
    assert counts.shape == (500, 37) and (counts.sum(axis=1) == 37).all()
    assert counts.mean() == pytest.approx(1.0)
    assert counts.var() == pytest.approx(1 - 1 / 37, abs=0.05)  # multinomial: var = n p (1 - p)


def test_intervals_cover_the_true_ratings_about_95_percent_of_the_time() -> None:
    """200 simulated tournaments of 6 bots (true ratings ~ N(0, 150 Elo), centred, as the fit's anchor is
    the pool mean), 60 four-player Plackett-Luce matches each, 100 resamples: about 95 % of the bots' true
    ratings fall inside their 95 % interval (binomial sd over 1200 intervals: 0.6 %)."""
    inside = total = 0
    for seed in range(200):
        strength, log = simulated_log(1000 + seed, bots=6, matches=60)
        mean = sum(strength.values()) / len(strength)
        for row in leaderboard(log, rng=random.Random(seed), resamples=100):
            truth = 1500 + ELO_PER_LOGIT * (strength[row.bot] - mean)
            inside += row.elo_low <= truth <= row.elo_high
            total += 1
    assert 0.88 <= inside / total <= 0.99
