"""The Korean advanced variant: 6 logs, barrels after safe 3-arrow moves, round scoring, tiebreaks."""

from __future__ import annotations

import json

from referee.games import get_game
from tests.games.conformance_tools import play_random
from tests.games.piranha_builders import ADVANCED, build, play

GAME = get_game(ADVANCED)


def _state(**fields):
    defaults = {"players": 3, "sombrero": 0, "phase": "choose_card", "stones": [6, 6, 6]}
    defaults.update(fields)
    return build(ADVANCED, **defaults)


def test_a_safe_three_arrow_move_draws_a_barrel_and_resolves_it_at_once() -> None:
    """'3칸 이동 카드를 사용하고 페드로 말을 무사히 이동시켰다면, 배럴 토큰 1개를 무작위로 가져와 공개합니다.
    그리고 공개한 배럴 토큰에 대한 행동을 즉시 수행합니다.' Default barrel (RECONSTRUCTION): gain 1 log."""
    state = _state(pedro=(4, 4))
    bag = state.barrel_bag
    state = play(ADVANCED, state, {0: "W3", 1: "E1", 2: "S1"})
    # W3 from the palm: (4,3), (4,2) sand, (4,1) water: 1 log laid, 1 log gained
    assert state.stones[0] == 6
    assert state.barrel_bag == bag[1:]
    assert state.barrel_log == ((1, 0, bag[0], "logs"),)
    assert GAME.public_view(state)["barrels_left"] == 26


def test_a_three_arrow_move_that_falls_draws_no_barrel() -> None:
    state = _state(pedro=(1, 4), board_stones=[(1, 4)])
    state = play(ADVANCED, state, {0: "N3", 1: "E1", 2: "S1"})
    assert state.phase == "take_piranha" and len(state.barrel_bag) == 27


def test_shorter_moves_draw_no_barrel() -> None:
    state = play(ADVANCED, _state(pedro=(4, 4)), {0: "W2", 1: "E2", 2: "S1"})
    assert len(state.barrel_bag) == 27


def test_no_barrel_when_none_are_left() -> None:
    """'더 이상 남은 배럴 토큰이 없다면 가져갈 수 없습니다.'"""
    state = _state(pedro=(4, 4), barrel_bag=())
    state = play(ADVANCED, state, {0: "W3", 1: "E1", 2: "S1"})
    assert state.stones[0] == 5 and state.barrel_log == ()


def test_kept_barrels_score_like_unused_logs() -> None:
    """RECONSTRUCTION, pluggable barrel table: a 'keep' barrel stays and scores at the round end."""
    state = build(ADVANCED, players=3, sombrero=0, params={"barrels": [{"effect": "keep"}]}, stones=[6, 6, 6],
                  phase="choose_card")
    state = play(ADVANCED, state, {0: "W3", 1: "E1", 2: "S1"})
    assert state.kept_barrels == (1, 0, 0)


def test_round_end_turns_unused_logs_into_points_except_for_the_piranha_taker() -> None:
    """'라운드 종료마다 ... 사용하지 않은 토큰을 모두 점수 토큰으로 교환합니다. 단, 이번 라운드에 피라니아
    토큰을 받은 사람은 ... 점수가 되지 않습니다. 남은 모든 토큰을 버립니다.'"""
    state = _state(pedro=(0, 4), board_stones=[(0, 4)], stones=[3, 5, 2], kept_barrels=[0, 1, 0], supply=60)
    state = play(ADVANCED, state, {0: "E1", 1: "N1", 2: "S1"})
    # E1 lays a log on (0,5); N1 sends Pedro off the board: seat 1 is guilty
    state = play(ADVANCED, state, {1: [0, 0]})
    assert state.scores == (2, 0, 2)
    assert state.kept_barrels == (0, 0, 0)
    # logs discarded to the supply, then refills for cards in hand: seat 0 lost E1 (5), seat 1 lost N1
    # (5), seat 2 lost its unrevealed S1 (5)
    assert state.stones == (5, 5, 5)
    assert state.supply == 60 + 2 + 5 + 2 - 15


def test_the_final_round_is_scored_too() -> None:
    """Engine decision (documented, parameter score_final_round): the round that ends the game is a
    round end, so its logs score before the totals are compared."""
    state = _state(pedro=(0, 4), board_stones=[(0, 4)], stones=[3, 5, 2], scores=[1, 9, 0],
                   taken=[[], [(10, 8), (0, 13), (2, 11)], []], piranhas=[(0, 0), (7, 12), (8, 2), (8, 13)])
    state = play(ADVANCED, state, {0: "E1", 1: "N1", 2: "S1"})
    state = play(ADVANCED, state, {1: [0, 0]})
    assert GAME.is_terminal(state)
    assert state.scores == (3, 9, 2)
    assert GAME.result(state) == {"ranks": [2, 1, 3], "scores": [3, 9, 2]}
    state = build(ADVANCED, players=3, sombrero=0, params={"score_final_round": False}, phase="choose_card",
                  pedro=(0, 4),
                  board_stones=[(0, 4)], stones=[3, 5, 2], scores=[1, 9, 0],
                  taken=[[], [(10, 8), (0, 13), (2, 11)], []], piranhas=[(0, 0), (7, 12), (8, 2), (8, 13)])
    state = play(ADVANCED, play(ADVANCED, state, {0: "E1", 1: "N1", 2: "S1"}), {1: [0, 0]})
    assert state.scores == (1, 9, 0)


def test_highest_score_wins_ties_go_to_the_larger_printed_log_sum_then_shared() -> None:
    """'가장 점수가 높은 플레이어가 승리합니다. 동점일 경우, 남아있는 카드에 그려진 통나무 토큰 그림의 합이
    더 큰 사람이 이깁니다. 그마저도 같다면, 승리의 기쁨을 함께 누리세요.' DECISIONS: n1 + 0.5 * n2."""
    hands = [
        {"N1", "N2", "E2"},  # 1 + 0.5 + 0.5 = 2
        {"N1", "E1", "N3"},  # 2
        {"N1", "N2", "N3"},  # 1.5
        {"N1"},  # 1, but the highest score
    ]
    state = build(ADVANCED, players=4, scores=[5, 5, 5, 6], hands=hands, phase="over")
    assert GAME.result(state) == {"ranks": [2, 2, 4, 1], "scores": [5, 5, 5, 6]}


def test_the_game_ends_as_in_the_basic_game() -> None:
    """'한 플레이어가 피라니아 토큰을 2개 또는 3개 받는 순간 게임은 종료됩니다.'"""
    assert GAME.initial_state(3, 1).rules.loss_threshold == 3
    assert GAME.initial_state(4, 1).rules.loss_threshold == 2


# Issue 22: the game-ending round's exchange.
ISSUE_22_ACTIONS = [{3: None}, {0: "S3", 1: "N1", 2: "S2", 3: "W2"}, {2: [10, 1]}, {0: None},
                    {0: "E2", 1: "S3", 2: "S1", 3: "W3"}, {2: [0, 6]}]


def _issue_22_match(**params):
    state = GAME.initial_state(4, 0, {"barrels": [{"effect": "keep"}] * 27, **params})
    for actions in ISSUE_22_ACTIONS:
        state = GAME.apply(state, actions)
    return state


def test_regression_the_game_ending_exchange_left_the_logs_on_the_table() -> None:
    """'남은 모든 토큰을 버립니다.' The round that ends the game is exchanged like every other round: the
    logs and kept barrels that just became points leave the players, the logs back to the supply. The
    final view used to show kept_barrels 0 but stones [4, 2, 5, 5] and supply 66."""
    state = _issue_22_match()
    assert GAME.is_terminal(state)
    view = json.loads(json.dumps(GAME.public_view(state)))  # as spectators and the replay viewer get it
    assert view.pop("board") == json.loads(json.dumps(GAME.public_view(GAME.initial_state(4, 0))["board"]))
    assert view == {
        "game": "piranha-pedro-ko-advanced", "players": 4, "phase": "over", "to_act": [], "move_round": 2,
        "sombrero": 0, "reveal_order": [[0, 0], [1, 0], [2, 0], [3, 0]], "commit_counts": [1, 1, 1, 1],
        "pedro": [10, 4],
        "board_stones": [[5, 2], [6, 2], [7, 2], [7, 3], [7, 4], [8, 4], [9, 4], [10, 4]],
        "piranhas": [[0, 0], [2, 1], [8, 2], [10, 8], [10, 14]],
        "stones": [0, 0, 0, 0], "supply": 82,  # 66 + the 16 unused logs; 82 + 8 on the board = 90
        "piranhas_taken": [0, 0, 2, 0], "taken_squares": [[], [], [[10, 1], [0, 6]], []], "loss_threshold": 2,
        "hand_sizes": [11, 11, 11, 11], "played": [["E2"], ["S3"], ["S1"], []],
        "history": [[1, 3, "W2", None], [1, 0, "S3", None], [1, 1, "N1", None], [1, 2, "S2", "piranha"],
                    [2, 0, "E2", None], [2, 1, "S3", None], [2, 2, "S1", "edge"]],
        "fall": {"seat": 2, "card": "S1", "cause": "edge", "at": [10, 4]},
        # round 1: [3, 6, -, 6] logs + seat 0's barrel; round 2: [4, 2, -, 5] logs + seat 1's barrel
        "scores": [8, 9, 0, 11], "barrels_left": 25, "kept_barrels": [0, 0, 0, 0],
        "barrel_draws": [{"round": 1, "seat": 0, "effect": {"effect": "keep"}},
                         {"round": 2, "seat": 1, "effect": {"effect": "keep"}}],
        "result": {"ranks": [3, 2, 4, 1], "scores": [8, 9, 0, 11]}, "stalled": False,
    }
    assert GAME.conservation(state)["stones"] == 90


def test_an_unscored_final_round_leaves_logs_and_barrels_alike_in_front_of_the_players() -> None:
    """With score_final_round false there is no final exchange: neither logs nor barrels are discarded."""
    view = GAME.public_view(_issue_22_match(score_final_round=False))
    assert view["stones"] == [4, 2, 5, 5] and view["kept_barrels"] == [0, 1, 0, 0] and view["supply"] == 66
    assert view["scores"] == [4, 6, 0, 6]


def test_the_final_exchange_with_an_unlimited_supply_empties_every_seat() -> None:
    view = GAME.public_view(_issue_22_match(supply="unlimited"))
    assert view["stones"] == [0, 0, 0, 0] and view["supply"] is None and view["scores"] == [8, 9, 0, 11]


def test_random_matches_end_with_no_log_or_barrel_in_front_of_anyone() -> None:
    """After a scored final exchange every log is on the board or back in the supply (none lost, none held)
    and no barrel is kept; without it (score_final_round false) the count is conserved all the same."""
    param_sets = [{}, {"barrels": [{"effect": "keep"}, {"effect": "logs", "amount": 2}] * 13},
                  {"supply": "unlimited"}, {"score_final_round": False}]
    for params in param_sets:
        for players in range(2, 7):
            for seed in range(12):
                state, _ = play_random(GAME, players, seed, params)
                if state.stalled:
                    continue
                if params.get("supply") != "unlimited":
                    assert state.supply + sum(state.stones) + len(state.board_stones) == 90
                if params.get("score_final_round", True):
                    assert state.stones == (0,) * players and state.kept_barrels == (0,) * players
                    if state.supply is not None:
                        assert state.supply + len(state.board_stones) == 90


def test_a_barrel_that_gives_logs_gives_only_what_the_supply_has_left() -> None:
    """Engine decision (documented): a 'logs' barrel drawn from a short supply gives what is left, maybe 0."""
    for supply, gained in [(1, 1), (0, 0), (5, 3)]:
        state = build(ADVANCED, players=3, sombrero=0, params={"barrels": [{"effect": "logs", "amount": 3}]},
                      stones=[6, 6, 6], supply=supply, phase="choose_card", pedro=(4, 4))
        state = play(ADVANCED, state, {0: "W3", 1: "E1", 2: "S1"})
        # W3 from the palm lays 1 log on (4,1), then the barrel
        assert state.stones[0] == 6 - 1 + gained and state.supply == supply - gained
        assert state.barrel_log == ((1, 0, 0, "logs"),)


def test_cards_committed_but_unrevealed_at_the_final_fall_do_not_count_in_the_tiebreak() -> None:
    """Engine decision (documented): '남아있는 카드' are the cards still in hand; a card laid face down for the
    broken move round is not. Counting seat 1's unrevealed N1 would tie seats 1 and 2."""
    state = build(ADVANCED, players=3, sombrero=0, phase="choose_card", pedro=(0, 4), stones=[0, 2, 2],
                  scores=[0, 5, 5], taken=[[(10, 8), (0, 13)], [], []],
                  piranhas=[(0, 0), (2, 11), (7, 12), (8, 2), (8, 13)])
    state = play(ADVANCED, state, {0: "N1", 1: "N1", 2: "N3"})  # seat 0 falls off the board at once
    assert state.pending == ((), ("N1",), ("N3",))
    state = play(ADVANCED, state, {0: [0, 0]})
    assert GAME.is_terminal(state) and state.scores == (0, 7, 7)
    # printed logs in hand: seat 1 3 x 1 + 4 x 0.5 = 5, seat 2 4 x 1 + 4 x 0.5 = 6
    assert GAME.result(state) == {"ranks": [3, 2, 1], "scores": [0, 7, 7]}


def test_score_tokens_are_unlimited() -> None:
    """Engine decision (documented): the box holds 57 score tokens, the engine never runs out of points."""
    state = _state(pedro=(0, 4), scores=[0, 56, 0])
    state = play(ADVANCED, state, {0: "N1", 1: "E1", 2: "S1"})
    state = play(ADVANCED, state, {0: list(state.piranhas[0])})
    assert state.scores == (0, 62, 6) and sum(state.scores) > 57
