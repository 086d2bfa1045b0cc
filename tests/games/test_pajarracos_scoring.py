"""Pajarracos scoring: every fruit card, the largest tree once more, the fruit-kinds tiebreak."""

from __future__ import annotations

from referee.games.pajarracos import PAJARRACOS as GAME
from referee.games.pajarracos.scenario import build_state

SERYOZHA, OLYA, KATYA = 0, 1, 2

#: The rulebook's three examples. The kinds of the unnamed trees are chosen to fit the deck (9 per
#: fruit, one of them juicy: Katya's banana tree holds the juicy banana, which scores 1 like any fruit).
EXAMPLE_ORCHARDS = [
    "apples=5; cherries=1; bananas=4; grapes=3",  # 1+4+3+5x2 = 18, 4 kinds
    "cherries=3; oranges=3; bananas=3; grapes=2",  # 3x2+3+3+2 = 14, 4 kinds
    "oranges=4; cherries=3; apples=2; grapes=3; bananas=1+1*",  # 4x2+3+2+3+2 = 18, 5 kinds
]


def finished(orchards: list[str]):
    return build_state([""] * len(orchards), orchards, phase="over")


def test_the_rulebook_scoring_examples() -> None:
    """Scoring Examples: Seryozha 1+4+3+5x2 = 18; Olya 3x2+3+3+2 = 14; Katya 4x2+3+2+3+2 = 18.
    "Katya is the winner. Although Katya and Seryozha have the same number of points, Katya has more
    kinds of fruit in her orchard than Seryozha." """
    result = GAME.result(finished(EXAMPLE_ORCHARDS))
    assert result["scores"] == [18, 14, 18]
    assert result["ranks"][KATYA] == 1
    assert result["ranks"] == [2, 3, 1]


def test_all_fruit_cards_plus_the_largest_tree_once_more() -> None:
    """Scoring: "Players count the number of all fruit cards in their orchard and add to the total
    the number of cards of their largest fruit tree." DECISIONS §2: a juicy card scores 1."""
    state = finished(["apples=2+1*; grapes=1", "", "cherries=1*"])
    assert GAME.result(state)["scores"] == [4 + 3, 0, 2]


def test_equally_large_trees_count_only_once() -> None:
    """Scoring: "If a player has several equally large trees, only one of them is counted." (Olya.)"""
    state = finished(["cherries=3; oranges=3; bananas=3; grapes=2", "apples=3", "grapes=1"])
    assert GAME.result(state)["scores"][0] == 14


def test_highest_total_wins_and_ties_go_to_more_fruit_kinds() -> None:
    """Scoring: "The winner is the player with the highest total of victory points. In case of a tie,
    the player with more kinds of fruit trees in their orchard wins." """
    state = finished(["apples=4", "cherries=2; grapes=2", "oranges=1"])
    result = GAME.result(state)
    assert result["scores"] == [8, 6, 2] and result["ranks"] == [1, 2, 3]
    state = finished(["apples=3; cherries=1", "grapes=2; bananas=1; oranges=1", "oranges=1"])
    result = GAME.result(state)
    assert result["scores"] == [7, 6, 2] and result["ranks"] == [1, 2, 3]
    state = finished(["apples=3", "grapes=1; bananas=1; oranges=1", "oranges=1"])
    assert GAME.result(state) == {"scores": [6, 4, 2], "ranks": [1, 2, 3]}
    state = finished(["apples=2; cherries=1", "grapes=1; bananas=1; oranges=1", "oranges=1"])
    assert GAME.result(state) == {"scores": [5, 4, 2], "ranks": [1, 2, 3]}
    state = finished(["apples=3", "grapes=1; bananas=1", "oranges=2"])  # 6, 3, 4
    assert GAME.result(state)["ranks"] == [1, 3, 2]
    state = finished(["apples=2; cherries=1", "grapes=2; bananas=1", "oranges=3"])  # 5, 5 (2 kinds), 6
    assert GAME.result(state)["ranks"] == [2, 2, 1]
    state = finished(["apples=2; cherries=2", "grapes=3", "oranges=1"])  # 6 (2 kinds) beats 6 (1 kind)
    assert GAME.result(state) == {"scores": [6, 6, 2], "ranks": [1, 2, 3]}


def test_a_tie_on_points_and_kinds_is_a_shared_placing() -> None:
    """Scoring: "If the tie still remains, play another game." DECISIONS §2 and §3: still tied ->
    shared placing (competition ranking)."""
    state = finished(["apples=2; cherries=1", "grapes=1; bananas=2", "oranges=1", ""])
    assert GAME.result(state) == {"scores": [5, 5, 2, 0], "ranks": [1, 1, 3, 4]}


def test_scores_so_far_are_public() -> None:
    state = build_state(["apples", "grapes", "grapes"], ["apples=2; cherries=1", "", "bananas=1 crow"])
    assert GAME.public_view(state)["scores"] == [5, 0, 2]
