"""Preparation rules of both editions, one test per rule sentence."""

from __future__ import annotations

import random

import pytest

from referee.errors import RulesError
from referee.games import get_game
from referee.games.piranha.board import default_board
from referee.games.piranha.cards import FULL_SET
from tests.games.piranha_builders import ADVANCED, KOREAN, ORIGINAL

BOARD = default_board()


def test_board_is_15_columns_by_11_rows_with_8_island_squares_and_7_marked_squares() -> None:
    """DECISIONS 1: 15 columns x 11 rows; one island of 8 sand squares with the palm; 7 marked squares."""
    assert (BOARD.height, BOARD.width) == (11, 15)
    assert len(BOARD.sand) == 8 and BOARD.palm in BOARD.sand
    assert len(BOARD.piranha_squares) == 7
    assert len(BOARD.fish_squares) == 14


def test_original_piranhas_start_on_the_marked_spaces() -> None:
    """'The 7 piranhas are distributed onto the marked spaces of the board.'"""
    for seed in range(5):
        state = get_game(ORIGINAL).initial_state(4, seed)
        assert set(state.piranhas) == set(BOARD.piranha_squares)


def test_pedro_starts_on_the_palm_tree_space() -> None:
    """'Pedro starts on the palm tree space.' (Korean: '페드로 말을 섬에 있는 야자수 칸에 놓습니다.')"""
    for name in (ORIGINAL, KOREAN, ADVANCED):
        assert get_game(name).initial_state(3, 1).pedro == BOARD.palm == (4, 4)


def test_every_player_gets_the_same_12_move_cards() -> None:
    """'Every player gets the same 12 move cards.' DECISIONS: 4 directions x {1, 2, 3} arrows."""
    state = get_game(ORIGINAL).initial_state(6, 1)
    assert len(FULL_SET) == 12
    assert all(hand == frozenset(FULL_SET) for hand in state.hands)
    view = get_game(ORIGINAL).view(state, 2)
    assert view["hand"] == ["N1", "N2", "N3", "E1", "E2", "E3", "S1", "S2", "S3", "W1", "W2", "W3"]


def test_each_player_takes_4_stones_from_a_supply_of_100() -> None:
    """'Each player takes 4 stones as his personal supply.' 'more than 100 carrara stones' -> 100."""
    state = get_game(ORIGINAL).initial_state(5, 1)
    assert state.stones == (4,) * 5
    assert state.supply == 100 - 20


def test_korean_each_player_takes_4_logs_from_90() -> None:
    """'각 플레이어당 4개의 통나무 토큰을 받습니다.' '통나무 토큰 90개'"""
    state = get_game(KOREAN).initial_state(6, 1)
    assert state.stones == (4,) * 6
    assert state.supply == 90 - 24


def test_advanced_each_player_starts_with_6_logs() -> None:
    """Advanced: '각 플레이어당 6개의 통나무 토큰을 받고 시작합니다.'"""
    state = get_game(ADVANCED).initial_state(4, 1)
    assert state.stones == (6,) * 4
    assert state.supply == 90 - 24


def test_start_player_is_drawn_from_the_seed() -> None:
    """'Any player takes the sombrero card' / DECISIONS 0: who starts is drawn from the match seed."""
    game = get_game(ORIGINAL)
    starts = {game.initial_state(4, seed).sombrero for seed in range(40)}
    assert starts == {0, 1, 2, 3}
    assert all(game.initial_state(4, 9).sombrero == game.initial_state(4, 9).sombrero for _ in range(3))


def test_korean_piranhas_are_placed_at_random_on_fish_squares() -> None:
    """'피라니아 토큰 7개를 무작위로 배치합니다' on '물고기 그림이 있는 칸'."""
    game = get_game(KOREAN)
    layouts = set()
    for seed in range(30):
        state = game.initial_state(3, seed)
        assert len(state.piranhas) == 7 and len(set(state.piranhas)) == 7
        assert set(state.piranhas) <= set(BOARD.fish_squares)
        layouts.add(state.piranhas)
        assert game.initial_state(3, seed).piranhas == state.piranhas
    assert len(layouts) > 20


def test_the_first_decision_is_everyone_choosing_a_card_in_the_original() -> None:
    """'All players at the same time choose one of their cards and place it face down.'"""
    game = get_game(ORIGINAL)
    state = game.initial_state(4, 3)
    assert game.to_act(state) == frozenset(range(4))
    assert {game.decision(state, s) for s in range(4)} == {"choose_card"}
    assert game.legal_actions(state, 0) == list(FULL_SET)


def test_korean_start_player_first_decides_on_a_piranha_move() -> None:
    """'선 플레이어 카드를 가진 플레이어는 ... 피라니아 중 한 마리를 ... 이동시킬 수 있습니다.'"""
    game = get_game(KOREAN)
    state = game.initial_state(4, 3)
    assert game.to_act(state) == frozenset({state.sombrero})
    assert game.decision(state, state.sombrero) == "move_piranha"


@pytest.mark.parametrize(
    "params",
    [
        {"supply": -1},
        {"supply": "lots"},
        {"loss_threshold": 0},
        {"start_stones": True},
        {"colour": "red"},
        {"supply": 10, "start_stones": 4},
        {"max_move_rounds": 0},
        {"score_final_round": "yes"},
    ],
)
def test_bad_parameters_are_refused_with_a_clear_error(params: dict) -> None:
    with pytest.raises(RulesError):
        get_game(ORIGINAL).initial_state(3, 1, params)


@pytest.mark.parametrize("players, threshold", [(6, 3), (4, 3), (3, 4), (2, 5)])
def test_regression_a_loss_threshold_the_boards_piranhas_cannot_reach_is_refused(players: int, threshold: int) -> None:
    """DECISIONS 1: the board never runs out, as at most n*(t-1)+1 <= 7 piranhas are ever taken. A tournament
    parameter could raise t: 6 players with ``loss_threshold`` 3 ran out of piranhas (seed 2), and the guilty
    seat had no legal action left, so even the referee's fallback move for it raised (a helper's audit)."""
    for game in (ORIGINAL, KOREAN, ADVANCED):
        with pytest.raises(RulesError, match=f"needs up to {players * (threshold - 1) + 1} piranhas"):
            get_game(game).initial_state(players, 1, {"loss_threshold": threshold})


def test_the_highest_loss_threshold_the_board_serves_never_runs_out_of_piranhas() -> None:
    """3 players to 3 piranhas take at most 7, the board's 7: random matches always leave a piranha to take."""
    game = get_game(ORIGINAL)
    for seed in range(40):
        rng = random.Random(seed)
        state = game.initial_state(3, seed, {"loss_threshold": 3})
        while not game.is_terminal(state):
            legal = {seat: game.legal_actions(state, seat) for seat in game.to_act(state)}
            assert all(legal.values()), (seed, state.phase)
            state = game.apply(state, {seat: rng.choice(actions) for seat, actions in legal.items()})


def test_barrels_are_refused_outside_the_advanced_variant() -> None:
    with pytest.raises(RulesError, match="advanced"):
        get_game(KOREAN).initial_state(3, 1, {"barrels": [{"effect": "keep"}]})


def test_unlimited_supply_is_allowed() -> None:
    """DECISIONS: make the supply a parameter with 'unlimited' allowed."""
    state = get_game(ORIGINAL).initial_state(3, 1, {"supply": "unlimited"})
    assert state.supply is None


def test_a_replacement_board_layout_is_data() -> None:
    """DECISIONS: keep the layout as data, so a verified layout can replace it."""
    rows = ["F...F", ".SP..", "F...F"]
    state = get_game(ORIGINAL).initial_state(3, 1, {"board": {"name": "tiny", "rows": rows}})
    assert state.pedro == (1, 2)
    assert set(state.piranhas) == {(0, 0), (0, 4), (2, 0), (2, 4)}  # 3 players to 2 piranhas take at most 4
    with pytest.raises(RulesError):
        get_game(ORIGINAL).initial_state(3, 1, {"board": {"rows": ["..", ".."]}})
