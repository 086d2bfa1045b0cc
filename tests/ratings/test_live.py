"""Live Elo: hand-computed updates and the K/(k-1) scaling of multiplayer matches."""

from __future__ import annotations

import pytest

from arena.ratings import ONE_LOSER, RANKED, MatchOutcome
from arena.ratings.live import LiveElo, expected_score


def test_a_win_then_a_draw_between_two_bots() -> None:
    """Both start at 1500, expected 0.5: the winner gains 32 * (1 - 0.5) = 16 (1516 / 1484). Then a draw:
    A expected 1 / (1 + 10^(-32/400)) = 0.545922, so A moves 32 * (0.5 - 0.545922) = -1.469502."""
    live = LiveElo()
    assert live.update(MatchOutcome(("A", "B"), (1, 2), RANKED)) == {"A": 16.0, "B": -16.0}
    assert (live.rating("A"), live.rating("B")) == (1516.0, 1484.0)
    assert expected_score(1516.0, 1484.0) == pytest.approx(0.5459219, abs=1e-7)
    change = live.update(MatchOutcome(("A", "B"), (1, 1), RANKED))
    assert change["A"] == pytest.approx(-1.4695015, abs=1e-7)
    assert change["B"] == pytest.approx(1.4695015, abs=1e-7)


def test_a_four_player_ranked_match_scales_each_pair_by_k_over_three() -> None:
    """All at 1500, every pair moves by (32/3) * (+-0.5) = +-16/3: first place wins 3 pairs (+16), second
    2 of 3 (+16/3), third 1 of 3 (-16/3), last none (-16); a whole match moves like one duel."""
    live = LiveElo()
    change = live.update(MatchOutcome(("A", "B", "C", "D"), (1, 2, 3, 4), RANKED))
    assert change == pytest.approx({"A": 16.0, "B": 16 / 3, "C": -16 / 3, "D": -16.0})


def test_a_one_loser_match_only_pairs_the_loser_with_each_winner() -> None:
    """D lost: pairs A>D, B>D, C>D only, each (32/3) * 0.5: winners +16/3, D -16. No winner-winner draws."""
    live = LiveElo()
    change = live.update(MatchOutcome(("A", "B", "C", "D"), (1, 1, 1, 4), ONE_LOSER))
    assert change == pytest.approx({"A": 16 / 3, "B": 16 / 3, "C": 16 / 3, "D": -16.0})


def test_k_is_configurable_and_pairs_use_the_ratings_from_before_the_match() -> None:
    """With K = 10 a three-player match scales pairs by 5; the update is simultaneous, so seat order
    does not change it."""
    first, second = LiveElo(k=10), LiveElo(k=10)
    for live in (first, second):
        live.update(MatchOutcome(("A", "B"), (1, 2), RANKED))
    a = first.update(MatchOutcome(("A", "B", "C"), (3, 1, 2), RANKED))
    b = second.update(MatchOutcome(("C", "A", "B"), (2, 3, 1), RANKED))
    assert a == pytest.approx(b)
    assert a["C"] == pytest.approx(5 * (1 - expected_score(1500, 1505)) + 5 * (0 - expected_score(1500, 1495)))
    assert sum(a.values()) == pytest.approx(0.0, abs=1e-12)


def test_provisional_until_enough_games() -> None:
    live = LiveElo(provisional_games=2)
    assert live.is_provisional("A") and live.rating("A") == 1500.0
    live.update(MatchOutcome(("A", "B"), (1, 2)))
    assert live.is_provisional("A")
    live.update(MatchOutcome(("A", "C"), (2, 1)))
    table = live.table()
    assert [row.bot for row in table] == ["C", "A", "B"]
    assert [(row.games, row.provisional) for row in table] == [(1, True), (2, False), (1, True)]
    with pytest.raises(ValueError):
        LiveElo(k=0)
