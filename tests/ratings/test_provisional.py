"""Provisional ratings and settled boards, read from the intervals."""

from __future__ import annotations

import random
from types import SimpleNamespace

from arena.ratings import MatchOutcome, is_provisional, is_settled, leaderboard, unresolved_pairs
from arena.ratings.bradley_terry import ELO_PER_LOGIT
from arena.ratings.provisional import PROVISIONAL_WIDTH_ELO, TIE_WIDTH_ELO
from bench import ratings_quality as quality


def entry(low: float, high: float, los: float | None) -> SimpleNamespace:
    return SimpleNamespace(elo_low=low, elo_high=high, los_next=los)


def test_provisional_while_the_interval_is_wider_than_the_limit() -> None:
    assert is_provisional(1300.0, 1300.0 + PROVISIONAL_WIDTH_ELO + 0.1)
    assert not is_provisional(1300.0, 1300.0 + PROVISIONAL_WIDTH_ELO)
    assert is_provisional(1400.0, 1500.0, max_width=50.0)


def test_a_board_settles_when_every_neighbour_pair_is_told_apart_or_practically_tied() -> None:
    """Three bots: the first two told apart (LOS 0.99), the last two neither apart (LOS 0.7) nor narrow
    enough to call equal: unsettled at place 1. Narrow the last two to the tie width: settled. A provisional
    bot keeps any board unsettled; an empty board is not settled."""
    apart, close = 0.99, 0.7
    rows = [entry(1700, 1800, apart), entry(1500, 1700, close), entry(1450, 1650, None)]
    assert unresolved_pairs(rows) == [1] and not is_settled(rows)
    tied = [entry(1700, 1800, apart), entry(1520, 1520 + TIE_WIDTH_ELO, close),
            entry(1500, 1500 + TIE_WIDTH_ELO, None)]
    assert unresolved_pairs(tied) == [] and is_settled(tied)
    newcomer = [*tied[:2], entry(1100, 1100 + PROVISIONAL_WIDTH_ELO + 1, None)]
    newcomer[1] = entry(1520, 1520 + TIE_WIDTH_ELO, 0.999)
    assert unresolved_pairs(newcomer) == [] and not is_settled(newcomer)
    assert not is_settled([])


def test_a_new_bot_is_provisional_and_a_well_played_one_is_not() -> None:
    """On a simulated ladder board the bots with one or two matches are all provisional and those with
    about 100 four-player matches none, and the table's rows say so themselves."""
    board = quality.ladder_board(11, 4)
    table = leaderboard(board.log, rng=random.Random(1), resamples=20)
    assert all(row.provisional for row in table if row.games <= 2)
    assert not any(row.provisional for row in table if row.games >= 80)


def test_a_long_settled_board_of_well_separated_bots_is_settled() -> None:
    """Six bots 300 Elo apart, 3,000 two-player matches: every neighbour pair is told apart."""
    rng = random.Random(5)
    strength = {f"b{i}": i * 300 / ELO_PER_LOGIT for i in range(6)}
    bots = sorted(strength)
    log = [quality.race(rng, strength.__getitem__, rng.sample(bots, 2)) for _ in range(3000)]
    table = leaderboard(log, rng=random.Random(2), resamples=50)
    assert is_settled(table)
    fresh = leaderboard([*log, MatchOutcome(("new", "b0"), (1, 2))], rng=random.Random(2), resamples=50)
    assert not is_settled(fresh)
