"""Punishment, evaluation, the sombrero, the end of the game (original rulebook sentences)."""

from __future__ import annotations

import pytest

from referee.errors import RulesError
from referee.games import get_game
from referee.games.piranha.cards import FULL_HAND
from tests.games.piranha_builders import ORIGINAL, build, play

GAME = get_game(ORIGINAL)


def _fall_state(players: int = 3, **fields):
    """Seat 0 holds the sombrero; Pedro at the top edge on a stone, so 'N1' falls off the board."""
    defaults = {"sombrero": 0, "pedro": (0, 4), "board_stones": [(0, 4)], "stones": [4] * players}
    defaults.update(fields)
    return build(players=players, **defaults)


def test_the_guilty_player_takes_any_piranha_he_likes() -> None:
    """'As a punishment the guilty player takes any piranha he likes from the board.'"""
    state = play(ORIGINAL, _fall_state(), {0: "S1", 1: "N2", 2: "E1"})
    # S1 to (1,4) costs 1; N2: (0,4) stone, then off the board -> seat 1 is guilty
    assert GAME.to_act(state) == frozenset({1})
    assert GAME.decision(state, 1) == "take_piranha"
    assert GAME.legal_actions(state, 1) == [list(p) for p in sorted(state.piranhas)]
    state = play(ORIGINAL, state, {1: [10, 8]})
    assert state.taken[1] == ((10, 8),)
    assert (10, 8) not in state.piranhas and len(state.piranhas) == 6


def test_a_piranha_not_on_the_board_cannot_be_taken() -> None:
    state = play(ORIGINAL, _fall_state(), {0: "N1", 1: "N2", 2: "E1"})
    with pytest.raises(RulesError):
        play(ORIGINAL, state, {0: [4, 4]})
    with pytest.raises(RulesError):
        play(ORIGINAL, state, {0: [5, 5, 5]})


def test_a_taken_piranhas_square_becomes_empty_water() -> None:
    """DECISIONS: the guilty player takes it: that square becomes empty water."""
    state = play(ORIGINAL, _fall_state(), {0: "N1", 1: "N2", 2: "E1"})
    state = play(ORIGINAL, state, {0: [0, 0]})
    assert (0, 0) not in state.piranhas and (0, 0) not in state.board_stones


def test_the_second_piranha_loses_and_ends_the_game_at_once() -> None:
    """'As soon as a player receives his 2nd piranha, he has lost and the game ends immediately.
    All the other players have won.'"""
    state = _fall_state(players=4, taken=[[(10, 8)], [], [], []],
                        piranhas=[(0, 0), (0, 13), (2, 11), (7, 12), (8, 2), (8, 13)])
    state = play(ORIGINAL, state, {0: "N1", 1: "N2", 2: "E1", 3: "S1"})
    state = play(ORIGINAL, state, {0: [0, 0]})
    assert GAME.is_terminal(state) and GAME.to_act(state) == frozenset()
    assert GAME.result(state) == {"ranks": [4, 1, 1, 1], "scores": [0, 1, 1, 1]}


def test_unrevealed_cards_go_under_the_board_and_earn_no_stones() -> None:
    """'All cards played in this move round are pushed half under the board — including the cards of
    the players who ... never got to turn theirs over.' Refill counts 'the cards that are not lying
    under the board'."""
    state = _fall_state(hands=[FULL_HAND, FULL_HAND, FULL_HAND])
    state = play(ORIGINAL, state, {0: "N1", 1: "E1", 2: "W1"})
    assert state.phase == "take_piranha" and state.pending == ((), ("E1",), ("W1",))
    state = play(ORIGINAL, state, {0: [0, 0]})
    # every hand lost one 1-arrow card: 3 ones + 4 twos (2 pairs) = 5 stones each
    assert state.stones == (5, 5, 5)


def test_evaluation_returns_unused_stones_and_refills_by_cards_in_hand() -> None:
    """'All players give back the stones they did not use ... For each move card with 1 arrow: take 1
    stone. For each pair of move cards with 2 arrows: take 1 stone. For a single card with 2 arrows,
    and for cards with 3 arrows: no stones at all.'"""
    hands = [
        {"N1", "N2", "E2", "S2", "N3"},  # 1 + 3 twos (1 pair) = 2
        {"N1", "E1", "S1", "W1", "N2", "E2", "S2", "W2"},  # 4 + 2 pairs = 6
        {"N3", "E3", "S3", "E2"},  # single 2 and threes = 0
    ]
    state = _fall_state(hands=hands, stones=[3, 9, 1], supply=50)
    state = play(ORIGINAL, state, {0: "N3", 1: "N1", 2: "N3"})
    # N3 from (0,4): off the board at once -> seat 0 is guilty, the others' cards stay unrevealed
    state = play(ORIGINAL, state, {0: [0, 0]})
    # seat 0 still holds N1 N2 E2 S2 (its N3 is under the board): 1 + 1 pair = 2
    # seat 1 loses its N1 under the board: 3 ones + 2 pairs = 5; seat 2 loses N3: 0
    assert state.stones == (2, 5, 0)
    assert state.supply == 50 + 3 + 9 + 1 - 7


def test_everyone_takes_all_12_cards_back_after_an_evaluation() -> None:
    """'Afterwards every player takes back all the cards he pushed under the board, so that everyone
    holds all 12 cards again.'"""
    state = play(ORIGINAL, _fall_state(), {0: "N1", 1: "E1", 2: "W1"})
    state = play(ORIGINAL, state, {0: [0, 0]})
    assert state.hands == (FULL_HAND,) * 3 and state.played == ((),) * 3 and state.pending == ((),) * 3


def test_pedro_restarts_on_the_last_space_he_safely_entered() -> None:
    """'Pedro is put back on the last space he safely entered before he fell into the water.'"""
    state = build(players=3, sombrero=0, pedro=(6, 6), stones=[1, 4, 4])
    state = play(ORIGINAL, state, {0: "E3", 1: "S1", 2: "S1"})
    assert state.fall["cause"] == "no_stones"
    state = play(ORIGINAL, state, {0: [0, 0]})
    assert state.pedro == (6, 7)
    assert (6, 7) in state.board_stones


def test_the_sombrero_passes_left_after_a_broken_move_round() -> None:
    """'The sombrero card is passed on to the left neighbour as usual, and a new move round begins.'"""
    state = play(ORIGINAL, _fall_state(), {0: "N1", 1: "E1", 2: "W1"})
    state = play(ORIGINAL, state, {0: [0, 0]})
    assert state.sombrero == 1 and state.phase == "choose_card" and state.move_round == 2


def test_the_sombrero_passes_left_after_a_complete_move_round() -> None:
    """'When everyone has had a turn, the move round is over. The sombrero card passes to the left
    neighbour and the second move round begins: each player chooses a card from his remaining 11.'"""
    state = build(players=3, sombrero=2, stones=[4, 4, 4])
    state = play(ORIGINAL, state, {0: "N1", 1: "S1", 2: "E1"})
    assert state.sombrero == 0 and state.move_round == 2
    assert [len(GAME.legal_actions(state, s)) for s in range(3)] == [11, 11, 11]
    assert "N1" not in GAME.legal_actions(state, 0)


def test_all_cards_played_means_everyone_takes_the_12_back_without_evaluation() -> None:
    """'All move cards have been played: the players take all 12 cards back into their hands and carry
    on playing with the full choice.' DECISIONS: no evaluation, stones unchanged."""
    state = build(players=3, sombrero=0, hands=[{"N1"}, {"S1"}, {"E1"}], stones=[2, 3, 4], supply=10)
    state = play(ORIGINAL, state, {0: "N1", 1: "S1", 2: "E1"})
    assert state.hands == (FULL_HAND,) * 3
    assert state.stones == (2, 3, 4) and state.supply == 10


def test_without_enough_stones_in_the_supply_nobody_gets_new_stones() -> None:
    """'There are not enough stones: no player receives new stones when an evaluation takes place.'
    DECISIONS: if the supply cannot cover ALL refills, nobody gets any."""
    state = _fall_state(stones=[0, 0, 0], supply=11)
    state = play(ORIGINAL, state, {0: "N1", 1: "E1", 2: "W1"})
    state = play(ORIGINAL, state, {0: [0, 0]})
    # refills would be 5 + 5 + 5 = 15 > 11
    assert state.stones == (0, 0, 0) and state.supply == 11
    state = _fall_state(stones=[0, 0, 0], supply=15)
    state = play(ORIGINAL, play(ORIGINAL, state, {0: "N1", 1: "E1", 2: "W1"}), {0: [0, 0]})
    assert state.stones == (5, 5, 5) and state.supply == 0


def test_board_stones_never_go_back_to_the_supply() -> None:
    """DECISIONS: board stones are reused by everyone and never go back to the supply."""
    state = build(players=3, sombrero=0, pedro=(6, 6), stones=[4, 4, 0], supply=88)
    state = play(ORIGINAL, state, {0: "E2", 1: "N1", 2: "N1"})
    # E2 lays (6,7) and (6,8); N1 lays (5,8); seat 2 has no stone for (4,8)
    assert state.fall["seat"] == 2 and state.fall["cause"] == "no_stones"
    state = play(ORIGINAL, state, {2: [0, 0]})
    assert state.board_stones == frozenset({(6, 7), (6, 8), (5, 8)})
    assert state.supply + sum(state.stones) == 88 + 8 - 3


def test_loss_threshold_is_a_parameter() -> None:
    state = build(players=3, sombrero=0, pedro=(0, 4), board_stones=[(0, 4)], stones=[4, 4, 4],
                  params={"loss_threshold": 1})
    state = play(ORIGINAL, play(ORIGINAL, state, {0: "N1", 1: "E1", 2: "W1"}), {0: [0, 0]})
    assert GAME.is_terminal(state)


def test_the_move_round_cap_ends_a_match_that_would_never_end() -> None:
    """Arena rule (documented): after max_move_rounds the basic game ends with a shared win."""
    state = build(players=3, sombrero=0, params={"max_move_rounds": 1}, stones=[4, 4, 4])
    state = play(ORIGINAL, state, {0: "N1", 1: "S1", 2: "E1"})
    assert GAME.is_terminal(state) and state.stalled
    assert GAME.result(state) == {"ranks": [1, 1, 1], "scores": [1, 1, 1]}
