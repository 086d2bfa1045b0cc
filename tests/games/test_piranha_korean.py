"""Korean edition (피라니아) rules that differ from the original, one test per rule sentence."""

from __future__ import annotations

import pytest

from referee.errors import RulesError
from referee.games import get_game
from referee.games.piranha.board import default_board
from tests.games.piranha_builders import KOREAN, build, play

GAME = get_game(KOREAN)
FISH = set(default_board().fish_squares)
SEVEN = [(0, 0), (0, 13), (2, 11), (7, 12), (8, 2), (8, 13), (10, 8)]


def _round_start(**fields):
    defaults = {"players": 4, "sombrero": 2, "phase": "move_piranha", "piranhas": SEVEN, "stones": [4] * 4}
    defaults.update(fields)
    return build(KOREAN, **defaults)


def test_start_player_may_move_one_piranha_to_another_fish_square() -> None:
    """'선 플레이어 카드를 가진 플레이어는 ... 피라니아 중 한 마리를 골라 물고기 그림이 있는 다른 칸으로
    이동시킬 수 있습니다.'"""
    state = _round_start()
    legal = GAME.legal_actions(state, 2)
    free = FISH - set(SEVEN)
    assert len(legal) == 1 + 7 * len(free)
    assert [[0, 0], [0, 6]] in legal
    state = play(KOREAN, state, {2: [[0, 0], [0, 6]]})
    assert (0, 6) in state.piranhas and (0, 0) not in state.piranhas
    assert state.phase == "choose_card" and GAME.to_act(state) == frozenset(range(4))


def test_moving_a_piranha_is_optional() -> None:
    """'(원하지 않는다면 하지 않아도 됩니다.)' — answered with null."""
    state = _round_start()
    assert GAME.legal_actions(state, 2)[0] is None
    after = play(KOREAN, state, {2: None})
    assert after.piranhas == state.piranhas and after.phase == "choose_card"


def test_a_piranha_moves_only_to_an_empty_fish_square() -> None:
    """DECISIONS: to another fish square (empty: no piranha, no log, not Pedro)."""
    state = _round_start(board_stones=[(0, 6)])
    legal = GAME.legal_actions(state, 2)
    assert [[0, 0], [0, 6]] not in legal  # a log lies there
    assert [[0, 0], [0, 13]] not in legal  # a piranha is there
    assert [[0, 0], [1, 1]] not in legal  # not a fish square
    for bad in ([[0, 0], [0, 6]], [[0, 0], [1, 1]], [[1, 1], [2, 1]], [[0, 0]], "skip", [[0, 0], [2, 1], 5]):
        with pytest.raises(RulesError):
            play(KOREAN, state, {2: bad})


def test_only_the_start_player_decides_on_the_piranha_move() -> None:
    state = _round_start()
    assert GAME.to_act(state) == frozenset({2})
    with pytest.raises(RulesError):
        play(KOREAN, state, {1: None})


def test_the_piranha_move_comes_at_the_start_of_every_move_round() -> None:
    """Steps 1-4 repeat: '누군가가 피라니아 토큰을 얻게 될 때까지 1~4번을 반복합니다.'"""
    state = play(KOREAN, _round_start(), {2: None})
    state = play(KOREAN, state, {0: "N1", 1: "S1", 2: "E1", 3: "W1"})
    assert state.phase == "move_piranha" and GAME.to_act(state) == frozenset({3})


@pytest.mark.parametrize(("players", "threshold"), [(2, 3), (3, 3), (4, 2), (5, 2), (6, 2)])
def test_loss_thresholds_by_player_count(players: int, threshold: int) -> None:
    """'2~3인 게임 시: 피라니아 토큰을 3개 ... 4~6인 게임 시: 피라니아 토큰을 2개 얻은 플레이어가 나오면
    게임이 끝납니다.'"""
    state = GAME.initial_state(players, 1)
    assert state.rules.loss_threshold == threshold
    assert GAME.view(state, 0)["loss_threshold"] == threshold


def test_a_log_may_lie_on_an_empty_fish_square_never_on_a_piranha() -> None:
    """'통나무 토큰은 피라니아 토큰 위에 놓을 수 없습니다! 그러나 물고기의 그림이 그려진 곳에는 놓을 수
    있습니다.'"""
    state = build(KOREAN, players=3, sombrero=0, phase="choose_card", pedro=(1, 6), board_stones=[(1, 6)],
                  piranhas=[p for p in SEVEN if p != (0, 0)] + [(2, 1)], stones=[4, 4, 4])
    state = play(KOREAN, state, {0: "N1", 1: "W1", 2: "S1"})
    # N1 lays a log on the empty fish square (0,6); W1 then lays on (0,5); S1 back onto (1,5)
    assert {(0, 6), (0, 5)} <= state.board_stones and state.stones == (3, 3, 3)
    state = build(KOREAN, players=3, sombrero=0, phase="choose_card", pedro=(1, 6), board_stones=[(1, 6)],
                  piranhas=[*SEVEN[1:], (0, 6)], stones=[4, 4, 4])
    state = play(KOREAN, state, {0: "N1", 1: "W1", 2: "S1"})
    assert state.fall["cause"] == "piranha" and (0, 6) not in state.board_stones


def test_logs_laid_this_round_stay_on_the_board() -> None:
    """'이번 라운드에 게임판 위에 놓은 통나무 토큰은 게임판에 그대로 남아 있습니다.'"""
    state = build(KOREAN, players=3, sombrero=0, phase="choose_card", pedro=(6, 6), stones=[4, 4, 0])
    state = play(KOREAN, state, {0: "E2", 1: "N1", 2: "N1"})
    state = play(KOREAN, state, {2: list(state.piranhas[0])})
    assert {(6, 7), (6, 8), (5, 8)} <= state.board_stones


def test_korean_supply_is_90_logs() -> None:
    """'통나무 토큰 90개' — the refill rule with a finite supply."""
    state = GAME.initial_state(3, 1)
    assert state.rules.supply_total == 90
