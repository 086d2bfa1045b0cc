"""Comparison groups: bots that never met the rest by any chain of matches change nothing of the rest's fit."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from arena.ratings import ONE_LOSER, RANKED, MatchOutcome, groups, leaderboard, posterior, reference
from arena.ratings.bradley_terry import ELO_PER_LOGIT
from arena.ratings.leaderboard import canonical_log
from arena.ratings.packed import pack, pair_tally
from bench import ratings_quality as quality

ESTABLISHED = ("pp-heuristic", "pp-cautious", "pp-blunders-50", "pp-random")
NEWCOMERS = ("new-a", "new-b", "new-c")


def settled_board(seed: int, matches: int) -> list[MatchOutcome]:
    """Four bots, three-player races among them only (each match a deal of its own, as on the ladder)."""
    rng = random.Random(seed)
    strength = dict(zip(ESTABLISHED, np.array([250.0, 50.0, 0.0, -300.0]) / ELO_PER_LOGIT, strict=True))
    return [MatchOutcome(m.bots, m.ranks, m.kind, ("ladder", number))
            for number, m in enumerate(quality.race(rng, strength.__getitem__, rng.sample(ESTABLISHED, 3))
                                       for _ in range(matches))]


def round_robin() -> list[MatchOutcome]:
    """A tournament of three new bots among themselves: one deal in its three rotations, new-a winning it."""
    finish = {"new-a": 1, "new-b": 2, "new-c": 3}
    return [MatchOutcome(seats, tuple(finish[bot] for bot in seats), RANKED, ("tournament", 1))
            for seats in (NEWCOMERS, NEWCOMERS[1:] + NEWCOMERS[:1], NEWCOMERS[2:] + NEWCOMERS[:2])]


def fitted(log: list[MatchOutcome], exact: bool) -> posterior.Posterior:
    packed = pack(canonical_log(log))
    return posterior.fit(packed, pair_tally(packed), np.zeros(len(packed.bots)), exact=exact)


@pytest.mark.parametrize("method", ["exact", "one_step"])
def test_regression_a_disconnected_tournament_made_a_settled_board_provisional(method: str) -> None:
    """Regression: four bots with about 900 rated three-player matches each had intervals of +-16 to +-22
    Elo; three new bots then played one round robin among themselves only, on the same game and player count,
    and every established bot's interval grew to +-140 to +-165 Elo (all seven provisional), because each interval
    was taken relative to the mean of all seven bots, and the offset between the two groups, on which no
    match bears, is the prior's alone (sd about tau sqrt(1/4 + 1/3)). The three new bots were ranked among
    the established ones with rank ranges as if they had met them. Now the established intervals do not
    move (each group is its own anchor), the prior's spread and the design effect hardly move, and ranks
    between the groups are left open: every rank range counts the other group's bots as possibly above or
    below, and no LOS is given between bots of different groups."""
    board = settled_board(11, 1200)
    alone = {row.bot: row for row in leaderboard(board, rng=random.Random(1), method=method)}
    rows = leaderboard([*board, *round_robin()], rng=random.Random(1), method=method)
    table = {row.bot: row for row in rows}
    for bot in ESTABLISHED:
        before, after = alone[bot], table[bot]
        assert not after.provisional and after.elo_high - after.elo_low < 60.0
        assert after.elo == pytest.approx(before.elo, abs=0.5)
        assert after.elo_low == pytest.approx(before.elo_low, abs=1.0)
        assert after.elo_high == pytest.approx(before.elo_high, abs=1.0)
        # its rank among its own group, pushed down by as many as the three bots it never met
        assert (after.rank_low, after.rank_high) == (before.rank_low, before.rank_high + len(NEWCOMERS))
    for bot in NEWCOMERS:
        row = table[bot]
        assert row.provisional and row.games == 3
        assert row.rank_high - row.rank_low >= len(ESTABLISHED)  # the whole established group either side
    assert table["new-b"].rank_low == 1 and table["new-b"].rank_high == len(rows)  # the middle one: anywhere
    for upper, lower in itertools.pairwise(rows):
        if (upper.bot in NEWCOMERS) != (lower.bot in NEWCOMERS):
            assert upper.los_next is None

    exact = method == "exact"
    without, with_group = fitted(board, exact), fitted([*board, *round_robin()], exact)
    assert with_group.design_effect == pytest.approx(without.design_effect, rel=0.02)
    assert with_group.prior_sd == pytest.approx(without.prior_sd, rel=0.1)


def test_a_weakly_connected_group_is_still_one_group() -> None:
    """One match between the groups is a comparison path: one group, one anchor, ranks over the whole board
    from the draws (LOS given for every neighbour), as before."""
    bridge = MatchOutcome(("new-a", "pp-blunders-50", "pp-random"), (1, 2, 3), RANKED)
    log = [*settled_board(11, 300), *round_robin(), bridge]
    assert fitted(log, True).group.tolist() == [0] * 7
    rows = leaderboard(log, rng=random.Random(1))
    assert all(row.los_next is not None for row in rows[:-1])


def test_groups_follow_the_pairs_that_count() -> None:
    """Groups are the connected components of the pairs that carry a result: a chain links, a ``one_loser``
    match of tied winners does not, and labels run in order of each group's first bot."""
    chain = [MatchOutcome(("a", "b"), (1, 2)), MatchOutcome(("c", "b"), (1, 2)), MatchOutcome(("d", "e"), (2, 1))]
    tally = pair_tally(pack(chain))
    assert groups.labels(tally.score + tally.score.T).tolist() == [0, 0, 0, 1, 1]
    tied = pack([MatchOutcome(("a", "b", "c"), (1, 1, 2), ONE_LOSER), MatchOutcome(("d", "e", "f"), (1, 1, 1),
                                                                                    ONE_LOSER)])
    tally = pair_tally(tied)
    assert groups.labels(tally.score + tally.score.T).tolist() == [0, 0, 0, 1, 2, 3]


def test_each_group_is_centred_on_its_own_mean_and_ranked_within_itself() -> None:
    """Groups {0, 2} and {1, 3, 4}, two joint draws: each centred on its own group's mean, each bot ranked
    within its group, the upper end of its range moved down by the other group's bots."""
    group = np.array([0, 1, 0, 1, 1])
    values = np.array([[1.0, 10.0, 3.0, 20.0, 30.0], [5.0, 25.0, 3.0, 20.0, 30.0]])
    plain = 1.0 / np.bincount(group)[group]  # every bot the same weight: each group's plain mean
    assert reference.centred(values, group, plain).tolist() == [[-1.0, -10.0, 1.0, 0.0, 10.0],
                                                                [1.0, 0.0, -1.0, -5.0, 5.0]]
    low, high = groups.rank_ranges(values, group, 0.025)
    assert low.tolist() == [1, 2, 1, 2, 1]
    assert high.tolist() == [2 + 3, 3 + 2, 2 + 3, 3 + 2, 1 + 2]
    one = np.zeros(5, dtype=np.int64)  # one group: the plain ranks over the board
    assert groups.rank_ranges(values, one, 0.025)[1].tolist() == [5, 3, 5, 3, 1]


def test_the_posterior_mode_is_centred_on_each_groups_reference() -> None:
    """The prior is the only force on a group's mean, so every group is fitted apart; the table then puts
    each group's reference (its information-weighted mean, ``reference``) at 1500: weights summing to 1 per
    group, the two groups' modes each centred on their own."""
    fit = fitted([*settled_board(3, 200), *round_robin()], exact=True)
    assert np.bincount(fit.group, weights=fit.weights).tolist() == pytest.approx([1.0, 1.0])
    assert np.abs(reference.centred(fit.mode, fit.group, fit.weights) - fit.mode).max() < 1e-9
    assert np.abs(np.bincount(fit.group, weights=fit.weights * fit.mode)).max() < 1e-9
