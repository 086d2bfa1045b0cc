"""The intervals' reference: each group's information-weighted mean, which a newcomer barely moves."""

from __future__ import annotations

import random

import numpy as np
import pytest

from arena.ratings import MatchOutcome, leaderboard, reference
from arena.ratings.bradley_terry import ELO_PER_LOGIT
from arena.ratings.packed import pack, pair_tally
from bench import ratings_quality as quality
from tests.ratings.test_groups import fitted, round_robin, settled_board

ESTABLISHED = ("alpha", "bravo", "charlie", "delta")


def duels(seed: int, matches: int) -> list[MatchOutcome]:
    """Four bots, two-player races among them only: about ``matches`` / 2 matches each."""
    rng = random.Random(seed)
    strength = dict(zip(ESTABLISHED, np.array([200.0, 50.0, -50.0, -200.0]) / ELO_PER_LOGIT, strict=True))
    return [quality.race(rng, strength.__getitem__, rng.sample(ESTABLISHED, 2)) for _ in range(matches)]


@pytest.mark.parametrize("method", ["exact", "one_step"])
@pytest.mark.parametrize("result", [(1, 2), (2, 1)])
def test_regression_a_newcomers_first_match_widened_every_established_interval(
        method: str, result: tuple[int, int]) -> None:
    """Regression: four bots with about 400 duels each had intervals 58-69 Elo wide; a newcomer played one
    match against one of them and all four intervals grew to 171-177 Elo (160-166 on the large path), and
    their Elo moved by 16-22 points, though nothing about them had changed: each interval was relative to
    the plain mean of the five, which the newcomer's strength (sd about 300 Elo) moved by 300 / 5. On the
    ladder every newcomer made a settled board look unsettled. Now the reference is the mean weighted by
    each bot's information, in which one match weighs about 1 / 400 of an established bot: the established
    intervals and Elo stay where they were (within 1 %, 1 Elo), and the newcomer's interval, now read
    against the established bots instead of a mean made one fifth of itself, stays as wide as one match
    leaves it."""
    board = duels(5, 800)
    alone = {row.bot: row for row in leaderboard(board, rng=random.Random(1), method=method)}
    newcomer = MatchOutcome(("newcomer", "bravo"), result)
    table = {row.bot: row for row in leaderboard([*board, newcomer], rng=random.Random(1), method=method)}
    for bot in ESTABLISHED:
        before, after = alone[bot], table[bot]
        assert before.games > 350 and not before.provisional
        width_before, width_after = before.elo_high - before.elo_low, after.elo_high - after.elo_low
        assert width_after == pytest.approx(width_before, rel=0.25)  # the brief's bound; the fit gives < 1 %
        assert width_after == pytest.approx(width_before, rel=0.01)
        assert not after.provisional
        assert after.elo == pytest.approx(before.elo, abs=1.0)
    new = table["newcomer"]
    assert new.games == 1 and new.provisional and new.elo_high - new.elo_low > 600.0


@pytest.mark.parametrize("method", ["exact", "one_step"])
def test_only_the_reference_moves(method: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Against the plain mean (every bot the same weight: the reference until 2026-12-05) the table differs
    only by each group's shift: the differences between bots, rank ranges and LOS are the same, to rounding
    (the rank ranges' draws are shifted per group, which moves no rank within it)."""
    log = [*quality.ladder_board(3, 4).log]
    weighted = leaderboard(log, rng=random.Random(2), method=method)
    monkeypatch.setattr(reference, "information", lambda games, r: np.ones(len(r)))
    plain = leaderboard(log, rng=random.Random(2), method=method)
    assert [row.bot for row in plain] == [row.bot for row in weighted]
    assert [(row.rank, row.rank_low, row.rank_high) for row in plain] == [
        (row.rank, row.rank_low, row.rank_high) for row in weighted]
    assert [row.los_next for row in plain] == pytest.approx([row.los_next for row in weighted], abs=1e-9)
    shift = weighted[0].elo - plain[0].elo
    assert [row.elo + shift for row in plain] == pytest.approx([row.elo for row in weighted], abs=1e-6)
    assert any(abs((p.elo_high - p.elo_low) - (w.elo_high - w.elo_low)) > 1.0
               for p, w in zip(plain, weighted, strict=True))


def test_the_tables_elo_gives_the_weights_the_fit_used() -> None:
    """The weights depend on rating differences only, so a reader of the table (the coverage benchmark)
    recovers the fit's own from the table's Elo; they sum to 1 over each group, and bots with the same
    information weigh the same (a cycle of wins: the plain mean)."""
    log = [*settled_board(3, 200), *round_robin()]
    fit = fitted(log, exact=True)
    packed = pack(sorted(log, key=lambda m: (m.kind, m.ranks, tuple(map(repr, m.bots)), repr(m.deal))))
    tally = pair_tally(packed)
    elo = {row.bot: row.elo for row in leaderboard(log, rng=random.Random(1), resamples=0)}
    logits = np.array([elo[bot] for bot in packed.bots]) / ELO_PER_LOGIT
    recovered = reference.weights(tally.score + tally.score.T, logits, fit.group)
    assert recovered == pytest.approx(fit.weights, abs=1e-9)
    assert np.bincount(fit.group, weights=fit.weights) == pytest.approx([1.0, 1.0])
    cycle = [MatchOutcome(("a", "b"), (1, 2)), MatchOutcome(("b", "c"), (1, 2)), MatchOutcome(("c", "a"), (1, 2))]
    assert fitted(cycle, exact=True).weights == pytest.approx(np.full(3, 1.0 / 3.0))


def test_a_group_without_information_takes_its_plain_mean() -> None:
    games = np.zeros((3, 3))
    games[0, 1] = games[1, 0] = 2.0
    group = np.array([0, 0, 1])
    w = reference.weights(games, np.array([0.5, -0.5, 0.0]), group)
    assert w.tolist() == pytest.approx([0.5, 0.5, 1.0])
    assert reference.centred(np.array([3.0, 1.0, 7.0]), group, w).tolist() == pytest.approx([1.0, -1.0, 0.0])
