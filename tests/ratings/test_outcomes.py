"""Pairwise results of multiplayer matches: which pairs, which winner, which weight."""

from __future__ import annotations

import pytest

from arena.ratings import ONE_LOSER, RANKED, MatchOutcome, Pair, pairs
from referee.results import final_result


def test_ranked_match_gives_every_pair_with_draws_for_equal_ranks() -> None:
    """Ranks [2, 1, 2] (B won, A and C tied second): B>A, A=C (draw), B>C; each pair weighs 1/(3-1)."""
    outcome = MatchOutcome(("A", "B", "C"), (2, 1, 2), RANKED)
    assert pairs(outcome) == [
        Pair("B", "A", 1.0, 0.5),
        Pair("A", "C", 0.5, 0.5),
        Pair("B", "C", 1.0, 0.5),
    ]


def test_one_loser_pairs_only_winner_against_loser() -> None:
    """Piranha Pedro basic, four seats, D lost: A>D, B>D, C>D. Winner-winner pairs are skipped, not draws."""
    outcome = MatchOutcome(("A", "B", "C", "D"), (1, 1, 1, 4), ONE_LOSER)
    assert pairs(outcome) == [Pair("A", "D", 1.0, 1 / 3), Pair("B", "D", 1.0, 1 / 3), Pair("C", "D", 1.0, 1 / 3)]


def test_one_loser_with_a_forfeit_pairs_each_winner_with_each_seat_at_the_bottom() -> None:
    """Seat 0 forfeited a game that seat 3 lost: the stored ranks are [4, 1, 1, 3]; the two winners each
    beat both bottom seats (4 pairs) and the two bottom seats are not paired with each other."""
    stored = final_result({"ranks": [1, 1, 1, 4], "scores": [0, 0, 0, 1]}, forfeited=[0])
    assert stored["ranks"] == [4, 1, 1, 3]
    outcome = MatchOutcome.from_result(("A", "B", "C", "D"), stored, ONE_LOSER)
    assert [(p.first, p.second) for p in pairs(outcome)] == [("B", "A"), ("B", "D"), ("C", "A"), ("C", "D")]


def test_each_player_weighs_one_game_per_ranked_match() -> None:
    """The 1/(k-1) rule: in a ranked k-player match every bot is in k-1 pairs, so its total weight is 1."""
    for k in range(2, 7):
        outcome = MatchOutcome(tuple(range(k)), tuple(range(1, k + 1)), RANKED)
        for bot in range(k):
            assert sum(p.weight for p in pairs(outcome) if bot in (p.first, p.second)) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("bots", "ranks", "kind"),
    [
        (("A",), (1,), RANKED),
        (("A", "B"), (1,), RANKED),
        (("A", "A"), (1, 2), RANKED),
        (("A", "B"), (0, 1), RANKED),
        (("A", "B"), (1, 2), "elimination"),
    ],
)
def test_malformed_outcomes_are_refused(bots: tuple, ranks: tuple, kind: str) -> None:
    with pytest.raises(ValueError):
        MatchOutcome(bots, ranks, kind)
