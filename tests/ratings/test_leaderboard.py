"""The leaderboard table: posterior intervals, rank ranges, LOS, and interval coverage by simulation."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from arena.ratings import ONE_LOSER, RANKED, MatchOutcome, leaderboard, posterior, tally
from arena.ratings.bradley_terry import ELO_PER_LOGIT, fit_logits, precision_for, to_elo
from arena.ratings.leaderboard import canonical_log, competition_ranks
from arena.ratings.packed import pack, pair_tally


def race(rng: random.Random, strength: dict, table: list) -> MatchOutcome:
    """A Plackett-Luce finish: bot i finishes after an exponential time of rate e^{r_i}, so any two bots'
    order follows Bradley-Terry exactly, whoever else sits at the table."""
    finish = sorted(table, key=lambda bot: rng.expovariate(math.exp(strength[bot])))
    return MatchOutcome(tuple(table), tuple(finish.index(bot) + 1 for bot in table), RANKED)


def simulated_log(seed: int, bots: int = 8, matches: int = 120) -> tuple[dict, list[MatchOutcome]]:
    rng = random.Random(seed)
    strength = {f"b{i}": rng.gauss(0.0, 150 / ELO_PER_LOGIT) for i in range(bots)}
    return strength, [race(rng, strength, rng.sample(sorted(strength), 4)) for _ in range(matches)]


def test_the_table_is_consistent() -> None:
    _, log = simulated_log(1)
    table = leaderboard(log, rng=random.Random(7), resamples=100)
    counts = tally(log)
    sd = leaderboard(log, rng=random.Random(7), resamples=0)  # the point fit needs no draws
    fitted = fitted_posterior(log)  # the pure-Python fit of the tempered log with the fitted prior
    tempered = [[x / fitted.design_effect for x in row] for row in counts.score]
    elo = dict(zip(counts.bots, to_elo(fit_logits(tempered, precision_for(fitted.prior_sd))), strict=True))
    # the pure fit's pool mean is 1500; the table's is its reference, the information-weighted mean
    weight = dict(zip(pack(canonical_log(log)).bots, fitted.weights.tolist(), strict=True))
    reference = sum(weight[bot] * (elo[bot] - 1500.0) for bot in elo)
    assert [row.rank for row in table] == sorted(row.rank for row in table)
    assert [row.elo for row in table] == sorted((row.elo for row in table), reverse=True)
    for row in table:
        i = counts.bots.index(row.bot)
        assert row.elo == pytest.approx(elo[row.bot] - reference, abs=1e-6)
        assert (row.games, row.wins, row.draws, row.losses) == (
            counts.games[i], counts.wins[i], counts.draws[i], counts.losses[i]
        )
        assert row.elo_low < row.elo < row.elo_high
        assert row.rank_low <= row.rank <= row.rank_high
    assert all(0.5 <= row.los_next <= 1.0 for row in table[:-1])
    assert table[-1].los_next is None
    assert sum(row.games for row in table) == 4 * len(log)
    assert [(row.bot, row.elo) for row in sd] == [(row.bot, row.elo) for row in table]


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
        leaderboard([duel, duel], rng=random.Random(1), prior_sd=-5.0)
    assert leaderboard([], rng=random.Random(1)) == []
    no_intervals = leaderboard([duel], rng=random.Random(1), resamples=0)
    assert [(row.elo_low, row.los_next) for row in no_intervals] == [(row.elo, None) for row in no_intervals]


def test_intervals_cover_the_true_ratings_about_95_percent_of_the_time() -> None:
    """100 simulated tournaments of 6 bots (true ratings ~ N(0, 150 Elo), centred, as the fit's anchor is
    the pool mean), 60 four-player Plackett-Luce matches each: about 95 % of the bots' true ratings fall
    inside their 95 % interval (binomial sd over 600 intervals: 0.9 %)."""
    inside = total = 0
    for seed in range(100):
        strength, log = simulated_log(1000 + seed, bots=6, matches=60)
        mean = sum(strength.values()) / len(strength)
        for row in leaderboard(log, rng=random.Random(seed), resamples=20):
            truth = 1500 + ELO_PER_LOGIT * (strength[row.bot] - mean)
            inside += row.elo_low <= truth <= row.elo_high
            total += 1
    assert 0.91 <= inside / total <= 0.985


def fitted_posterior(log: list[MatchOutcome]) -> posterior.Posterior:
    """The posterior the exact table fitted to this log."""
    packed = pack(canonical_log(log))
    return posterior.fit(packed, pair_tally(packed), np.zeros(len(packed.bots)))


def test_regression_equal_records_ranked_apart_by_the_fits_last_bits() -> None:
    """Bots with the same record share a rank whatever the fit's rounding: the stored leaderboard (a
    warm-started refit) said "1, 1, 1" where a fresh fit of the same log said "1, 2, 3" (the chaos test)."""
    elo = np.array([1500.0 + 3e-11, 1400.0, 1500.0, 1500.0 - 2e-11, 1650.0])
    assert competition_ranks(elo).tolist() == [2, 5, 2, 2, 1]
    assert competition_ranks(np.array([1500.0, 1500.0 + 1.0])).tolist() == [2, 1]  # a real gap still counts
    # a balanced round robin in which b and c have the same record: same rating, same rank
    log = []
    for first, second, times in (("a", "b", 3), ("a", "c", 3), ("b", "c", 1), ("c", "b", 1), ("b", "d", 3),
                                 ("c", "d", 3), ("d", "a", 1)):
        log += [MatchOutcome((first, second), (1, 2), RANKED)] * times
    table = {row.bot: row for row in leaderboard(log, rng=random.Random(1), resamples=50)}
    assert table["b"].rank == table["c"].rank == 2 and table["a"].rank == 1 and table["d"].rank == 4
