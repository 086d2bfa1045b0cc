"""The two-player rules of each edition."""

from __future__ import annotations

import pytest

from referee.errors import RulesError
from referee.games import get_game
from referee.games.piranha.cards import FULL_HAND
from tests.games.piranha_builders import KOREAN, ORIGINAL, build, play


def test_original_sombrero_lays_two_cards_and_reveals_them_around_the_other_players_one() -> None:
    """'The player with the sombrero card lays out 2 cards face down instead of 1. He first turns over
    only one card and moves Pedro. Then it is his fellow player's turn with his single card. Finally the
    sombrero player turns over his second card and moves Pedro once more.'"""
    game = get_game(ORIGINAL)
    state = build(ORIGINAL, players=2, sombrero=1, stones=[4, 4])
    assert game.view(state, 1)["must_commit"] == 2 and game.view(state, 0)["must_commit"] == 1
    assert len(game.legal_actions(state, 1)) == 12 * 11
    assert ["N1", "E1"] in game.legal_actions(state, 1)
    assert game.legal_actions(state, 0)[0] == "N1"
    state = play(ORIGINAL, state, {1: ["N1", "E1"], 0: "W1"})
    assert [(seat, card) for _r, seat, card, _f in state.history] == [(1, "N1"), (0, "W1"), (1, "E1")]


def test_original_the_sombrero_then_passes_and_the_other_plays_two() -> None:
    """'Then the sombrero card passes to the other player, who now plays 2 cards while the first
    plays 1, and so on.'"""
    game = get_game(ORIGINAL)
    state = play(ORIGINAL, build(ORIGINAL, players=2, sombrero=1, stones=[4, 4]), {1: ["N1", "E1"], 0: "W1"})
    assert state.sombrero == 0
    assert game.view(state, 0)["must_commit"] == 2 and game.view(state, 1)["must_commit"] == 1


def test_original_two_player_game_ends_with_the_3rd_piranha() -> None:
    """'Playing with two, the game ends as soon as a player collects his 3rd piranha.'"""
    game = get_game(ORIGINAL)
    state = build(ORIGINAL, players=2, sombrero=0, pedro=(0, 4), board_stones=[(0, 4)], stones=[4, 4],
                  taken=[[(10, 8)], []], piranhas=[(0, 0), (0, 13), (2, 11), (7, 12), (8, 2), (8, 13)])
    state = play(ORIGINAL, play(ORIGINAL, state, {0: ["N1", "E1"], 1: "W1"}), {0: [0, 0]})
    assert not game.is_terminal(state) and len(state.taken[0]) == 2
    state = build(ORIGINAL, players=2, sombrero=0, pedro=(0, 4), board_stones=[(0, 4)], stones=[4, 4],
                  taken=[[(10, 8), (0, 0)], []], piranhas=[(0, 13), (2, 11), (7, 12), (8, 2), (8, 13)])
    state = play(ORIGINAL, play(ORIGINAL, state, {0: ["N1", "E1"], 1: "W1"}), {0: [0, 13]})
    assert game.is_terminal(state)
    assert game.result(state) == {"ranks": [2, 1], "scores": [0, 1]}


def test_korean_both_players_commit_two_cards_revealed_a1_b1_a2_b2() -> None:
    """'각 플레이어는 카드를 2장씩 선택하여 ... 1. 파란색 첫 번째 2. 녹색 첫번째 3. 파란색 두 번째
    4. 녹색 두 번째' and 'all commitments of a move round are collected before the first reveal'."""
    game = get_game(KOREAN)
    state = build(KOREAN, players=2, sombrero=0, stones=[4, 4], phase="choose_card")
    assert game.to_act(state) == frozenset({0, 1})
    assert len(game.legal_actions(state, 0)) == len(game.legal_actions(state, 1)) == 132
    state = play(KOREAN, state, {0: ["N1", "S1"], 1: ["E1", "W1"]})
    assert [(seat, card) for _r, seat, card, _f in state.history] == [
        (0, "N1"), (1, "E1"), (0, "S1"), (1, "W1")]


def test_korean_next_round_the_other_player_reveals_first() -> None:
    """'다음 라운드에서는 녹색 플레이어가 먼저 카드를 공개하고 페드로 말을 움직입니다.'"""
    state = build(KOREAN, players=2, sombrero=0, stones=[4, 4], phase="choose_card")
    state = play(KOREAN, state, {0: ["N1", "S1"], 1: ["E1", "W1"]})
    assert state.sombrero == 1 and state.phase == "move_piranha"
    state = play(KOREAN, state, {1: None})
    state = play(KOREAN, state, {0: ["N2", "S2"], 1: ["E2", "W2"]})
    assert [seat for _r, seat, _c, _f in state.history[4:]] == [1, 0, 1, 0]


def test_two_card_commitments_must_be_two_different_cards_from_the_hand() -> None:
    state = build(KOREAN, players=2, sombrero=0, stones=[4, 4], phase="choose_card",
                  hands=[FULL_HAND - {"N1"}, FULL_HAND])
    for bad in (["N2", "N2"], ["N1", "S1"], "N2", ["N2"], ["N2", "S2", "E2"], [1, 2]):
        with pytest.raises(RulesError):
            play(KOREAN, state, {0: bad, 1: ["E1", "W1"]})


def test_two_player_hands_run_out_together() -> None:
    """With 2 + 1 cards per move round alternating (original), both hands empty after 8 move rounds,
    so 'All move cards have been played' always applies to both players at once."""
    game = get_game(ORIGINAL)
    rows = ["S" * 41 for _ in range(41)]
    rows[20] = "S" * 20 + "P" + "S" * 20
    rows[0] = "F" * 5 + "S" * 36  # the 5 piranhas two players may take, out of Pedro's reach
    state = game.initial_state(2, 5, {"board": {"rows": rows}})
    order = ["N3", "S3", "E3", "W3", "N2", "S2", "E2", "W2", "N1", "S1", "E1", "W1"]
    sizes = []
    for _ in range(8):
        actions = {}
        for seat in game.to_act(state):
            cards = [c for c in order if c in state.hands[seat]][: game.view(state, seat)["must_commit"]]
            actions[seat] = cards[0] if len(cards) == 1 else cards
        state = game.apply(state, actions)
        sizes.append(tuple(sorted(len(h) for h in state.hands)))
    assert sizes[:7] == [(10, 11), (9, 9), (7, 8), (6, 6), (4, 5), (3, 3), (1, 2)]
    assert sizes[7] == (12, 12) and state.played == ((), ())
    assert not game.is_terminal(state) and state.stones == (4, 4)
