"""The large-board path (packed logs, conjugate-gradient Newton, warm starts) held against the exact one."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from arena.ratings import ONE_LOSER, RANKED, MatchOutcome, dense, leaderboard, tally
from arena.ratings.blas import controller, single_thread
from arena.ratings.bradley_terry import ELO_PER_LOGIT
from arena.ratings.leaderboard import (
    EXACT_MAX_BOTS,
    EXACT_MAX_PAIRS,
    exact_leaderboard,
    packed_leaderboard,
    use_exact,
)
from arena.ratings.packed import from_ids, pack, pair_tally
from tests.ratings.test_leaderboard import race


def ranked_log(seed: int, bots: int, matches: int, seats: int = 4, spread: float = 200.0) -> list[MatchOutcome]:
    """Plackett-Luce races among random tables; a few shared ranks (ties) mixed in."""
    rng = random.Random(seed)
    strength = {f"b{i:03d}": rng.gauss(0.0, spread / ELO_PER_LOGIT) for i in range(bots)}
    log = []
    for _ in range(matches):
        match = race(rng, strength, rng.sample(sorted(strength), seats))
        if rng.random() < 0.05:  # a tie for last place
            ranks = tuple(min(rank, seats - 1) for rank in match.ranks)
            match = MatchOutcome(match.bots, ranks, RANKED)
        log.append(match)
    return log


def one_loser_log(seed: int, bots: int, matches: int, seats: int = 4) -> list[MatchOutcome]:
    """Piranha Pedro style: one loser, sometimes two (forfeits put several seats at the bottom)."""
    rng = random.Random(seed)
    names = [f"p{i:02d}" for i in range(bots)]
    weak = {name: rng.random() for name in names}
    log = []
    for _ in range(matches):
        table = rng.sample(names, seats)
        losers = set(rng.choices(table, weights=[weak[b] for b in table], k=1 + (rng.random() < 0.1)))
        log.append(MatchOutcome(tuple(table), tuple(seats if b in losers else 1 for b in table), ONE_LOSER))
    return log


@pytest.mark.parametrize("make", [ranked_log, one_loser_log])
def test_the_packed_tally_equals_the_pure_one(make) -> None:
    """Same pair rule, same weights, same counts: the score matrix to float rounding, counts exactly."""
    log = make(1, 12, 300)
    counts = tally(log)
    pairs = pair_tally(pack(log))
    assert pack(log).bots == counts.bots
    assert np.allclose(pairs.score, np.array(counts.score), atol=1e-12)
    assert pairs.games.tolist() == counts.games
    assert (pairs.wins.tolist(), pairs.draws.tolist(), pairs.losses.tolist()) == (counts.wins, counts.draws,
                                                                                   counts.losses)


def test_integer_ids_pack_to_the_same_log_either_way() -> None:
    """``from_ids`` (the arena's arrays) and ``pack`` (outcome objects) agree, also beyond the lookup table."""
    outcomes = [MatchOutcome((7, 3, 42), (1, 3, 2)), MatchOutcome((42, 9, 3), (2, 1, 2))]
    ids = np.array([m.bots for m in outcomes])
    ranks = np.array([m.ranks for m in outcomes])
    for shift in (0, 10**9):
        log = from_ids(ids + shift, ranks, RANKED)
        assert log.bots == tuple(bot + shift for bot in pack(outcomes).bots)
        assert (log.seats == pack(outcomes).seats).all() and log.outcomes()[1].bots == (42 + shift, 9 + shift,
                                                                                         3 + shift)


def test_small_leaderboards_keep_the_exact_table() -> None:
    """At or under the thresholds every entry point gives exactly (==) the table of the exact path."""
    log = ranked_log(2, 10, 150)
    assert use_exact(10, 150, "auto") and not use_exact(EXACT_MAX_BOTS + 1, 10, "auto")
    assert not use_exact(10, EXACT_MAX_PAIRS + 1, "auto") and use_exact(10**4, 1, "exact")
    exact = exact_leaderboard(log, random.Random(5), 50, None, 0.95)
    assert leaderboard(log, rng=random.Random(5), resamples=50) == exact
    assert packed_leaderboard(pack(log), rng=random.Random(5), resamples=50) == exact
    assert leaderboard(log, rng=random.Random(5), resamples=50, start={"b000": 1900.0}) == exact


@pytest.mark.parametrize("make", [ranked_log, one_loser_log])
def test_the_large_board_path_approximates_the_exact_posterior_closely(make) -> None:
    """The large-board path fits the prior's spread with a second-order approximation of A^-1's diagonal
    instead of exact inverses (``posterior.curvature``): its ratings stay within 0.5 Elo of the exact path's
    and its interval widths within 3 %, from a cold start and from a poor warm start."""
    log = make(3, 30, 800)
    exact = {row.bot: row for row in leaderboard(log, rng=random.Random(1), method="exact")}
    for start in (None, {bot: 1500.0 + 300.0 * math.sin(i) for i, bot in enumerate(sorted(exact))}):
        rows = leaderboard(log, rng=random.Random(1), method="one_step", start=start)
        assert max(abs(row.elo - exact[row.bot].elo) for row in rows) < 0.5
        widths = [(row.elo_high - row.elo_low) / (exact[row.bot].elo_high - exact[row.bot].elo_low) for row in rows]
        assert min(widths) >= 0.97 and max(widths) <= 1.03
    points = leaderboard(log, rng=random.Random(1), resamples=0, method="one_step", prior_sd=400.0)
    assert all((row.elo_low, row.elo_high, row.los_next) == (row.elo, row.elo, None) for row in points)


def test_the_one_step_table_depends_on_neither_order_nor_start() -> None:
    log = ranked_log(4, 40, 1200)
    shuffled = list(log)
    random.Random(9).shuffle(shuffled)
    first = leaderboard(log, rng=random.Random(2), method="one_step")
    start = {row.bot: row.elo + random.Random(i).uniform(-30, 30) for i, row in enumerate(first)}
    for other in (leaderboard(shuffled, rng=random.Random(2), method="one_step"),
                  leaderboard(log, rng=random.Random(2), method="one_step", start=start)):
        assert [row.bot for row in other] == [row.bot for row in first]
        for mine, theirs in zip(first, other, strict=True):
            assert (mine.rank, mine.rank_low, mine.rank_high, mine.games, mine.wins) == (
                theirs.rank, theirs.rank_low, theirs.rank_high, theirs.games, theirs.wins)
            assert abs(mine.elo - theirs.elo) < 1e-6 and abs(mine.elo_low - theirs.elo_low) < 1e-4
            assert abs(mine.elo_high - theirs.elo_high) < 1e-4 and abs(mine.los_next - theirs.los_next) < 1e-6 \
                if mine.los_next is not None else theirs.los_next is None


def test_both_paths_agree_on_a_medium_leaderboard() -> None:
    """80 bots, 3,000 four-player matches: the exact and large-board paths give the same table to 0.1 Elo (ratings)
    and 0.5 Elo (interval ends), and the same ranks."""
    log = ranked_log(5, 80, 3_000, spread=150.0)
    exact = {row.bot: row for row in leaderboard(log, rng=random.Random(1), method="exact")}
    large = {row.bot: row for row in leaderboard(log, rng=random.Random(1), method="one_step")}
    assert max(abs(large[bot].elo - exact[bot].elo) for bot in exact) < 0.1
    assert max(abs(large[bot].elo_low - exact[bot].elo_low) for bot in exact) < 0.5
    assert {bot: (row.games, row.rank) for bot, row in large.items()} == {
        bot: (row.games, row.rank) for bot, row in exact.items()}


def test_one_step_intervals_cover_the_true_ratings_about_95_percent_of_the_time() -> None:
    """The coverage simulation of ``test_leaderboard`` (100 tournaments of 6 bots, 60 four-player matches)
    on the large-board path."""
    from tests.ratings.test_leaderboard import simulated_log

    inside = total = 0
    for seed in range(100):
        strength, log = simulated_log(1000 + seed, bots=6, matches=60)
        mean = sum(strength.values()) / len(strength)
        for row in leaderboard(log, rng=random.Random(seed), resamples=20, method="one_step"):
            truth = 1500 + ELO_PER_LOGIT * (strength[row.bot] - mean)
            inside += row.elo_low <= truth <= row.elo_high
            total += 1
    assert 0.91 <= inside / total <= 0.985


def test_the_one_step_path_refuses_what_it_cannot_do() -> None:
    log = ranked_log(6, 5, 20)
    with pytest.raises(ValueError, match="prior"):
        leaderboard(log, rng=random.Random(1), method="one_step", prior_sd=0.0)
    with pytest.raises(ValueError, match="method"):
        leaderboard(log, rng=random.Random(1), method="fast")
    assert packed_leaderboard(pack([]), rng=random.Random(1)) == []


def test_linear_algebra_runs_on_one_thread_and_the_setting_comes_back() -> None:
    blas = controller().select(user_api="blas")
    assert blas.lib_controllers, "numpy's BLAS was not found"

    def threads() -> set[int]:
        return {info["num_threads"] for info in controller().select(user_api="blas").info()}

    before = threads()
    with single_thread():
        assert threads() == {1}
        with single_thread():
            assert threads() == {1}
        assert threads() == {1}
    assert threads() == before


@pytest.mark.parametrize("n", [5, 300])
def test_the_triangular_inverse_inverts(n: int) -> None:
    """inv(L) by halves (above 128 rows: two levels of blocks) is an inverse, and lower triangular."""
    x = np.random.default_rng(n).standard_normal((n, n))
    low = np.linalg.cholesky(x @ x.T / n + np.eye(n))
    inverse = dense.triangular_inverse(low)
    assert np.abs(inverse @ low - np.eye(n)).max() < 1e-10
    assert not np.triu(inverse, 1).any()


def test_from_ids_keeps_dense_deal_labels_and_relabels_any_others() -> None:
    """Deal labels already 0..G-1 (what the arena passes) are kept as they are; any other integers are
    relabelled to the same partition; labels that group nothing give no deals at all."""
    ids = np.array([[1, 2], [2, 3], [3, 1], [1, 2]])
    ranks = np.array([[1, 2]] * 4)
    dense = from_ids(ids, ranks, RANKED, np.array([1, 0, 1, 2])).deals
    assert dense is not None and dense.tolist() == [1, 0, 1, 2]
    sparse = from_ids(ids, ranks, RANKED, np.array([70, -5, 70, 9])).deals
    assert sparse is not None and sparse.tolist() == [2, 0, 2, 1]
    assert from_ids(ids, ranks, RANKED, np.array([0, 1, 2, 3])).deals is None
    assert from_ids(ids, ranks, RANKED, np.array([3, 1, 5, 0])).deals is None  # gaps, nothing grouped
