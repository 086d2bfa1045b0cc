"""Moving Pedro: reveal order, stone costs, and the three ways to fall (original rulebook sentences)."""

from __future__ import annotations

from referee.games import get_game
from referee.games.piranha.board import default_board
from referee.games.piranha.movement import EDGE, NO_STONES, PIRANHA, move_pedro
from tests.games.piranha_builders import ORIGINAL, build, play

BOARD = default_board()
NO_PIRANHAS: frozenset = frozenset()


def test_the_sombrero_reveals_first_then_the_left_neighbours_in_turn() -> None:
    """'The player with the sombrero card is the first to turn his card over ... Then it is your left
    neighbour's turn: he turns his card over and moves Pedro, and so on.'"""
    state = build(players=3, sombrero=1, stones=[4, 4, 4])
    state = play(ORIGINAL, state, {0: "S1", 1: "N1", 2: "E1"})
    assert [(seat, card) for _r, seat, card, _f in state.history] == [(1, "N1"), (2, "E1"), (0, "S1")]
    assert state.pedro == (4, 5)  # N1 to (3,4), E1 to (3,5), S1 to (4,5): all sand
    assert state.stones == (4, 4, 4)


def test_the_card_moves_pedro_that_many_spaces_in_its_direction() -> None:
    """'The card shows a direction and 1, 2 or 3 arrows; he moves Pedro that many spaces.'"""
    move = move_pedro(BOARD, (6, 6), "W3", frozenset(), NO_PIRANHAS, 4)
    assert move.pedro == (6, 3) and move.fall is None
    move = move_pedro(BOARD, (6, 6), "N2", frozenset(), NO_PIRANHAS, 4)
    assert move.pedro == (4, 6)


def test_walking_on_sand_costs_nothing() -> None:
    """'As long as Pedro walks on sand, nothing happens — there is no cost.'"""
    move = move_pedro(BOARD, (4, 4), "W2", frozenset(), NO_PIRANHAS, 0)
    assert move.pedro == (4, 2) and move.laid == () and move.fall is None


def test_two_spaces_over_open_water_cost_two_stones() -> None:
    """'A move of 2 spaces over open water therefore costs 2 stones.'"""
    move = move_pedro(BOARD, (6, 6), "E2", frozenset(), NO_PIRANHAS, 4)
    assert move.laid == ((6, 7), (6, 8)) and move.pedro == (6, 8)


def test_three_spaces_of_which_the_first_two_are_dry_cost_one_stone() -> None:
    """'a move of 3 spaces of which the first two are dry costs only 1 stone.'"""
    move = move_pedro(BOARD, (4, 4), "N3", frozenset(), NO_PIRANHAS, 4)
    assert move.laid == ((1, 4),) and move.pedro == (1, 4) and move.fall is None


def test_the_mover_lays_his_own_stone_before_stepping_onto_empty_water() -> None:
    """'before Pedro steps onto an empty water space, the moving player must sacrifice a stone from his
    own supply and lay it on that space.'"""
    state = build(players=3, sombrero=0, pedro=(6, 6), stones=[4, 4, 4])
    state = play(ORIGINAL, state, {0: "E2", 1: "S1", 2: "S1"})
    assert state.stones == (2, 3, 3)
    assert state.board_stones == frozenset({(6, 7), (6, 8), (7, 8), (8, 8)})


def test_stones_on_the_board_are_reused_for_free_by_anyone() -> None:
    """'Stones that are already lying on the board stay there and can be used again. If you send Pedro
    back over spaces that another player has already paid for, you ... pay nothing.'"""
    state = build(players=3, sombrero=0, pedro=(6, 6), stones=[4, 4, 4])
    state = play(ORIGINAL, state, {0: "E2", 1: "W2", 2: "E1"})
    # seat 0 pays 2; seat 1 walks back over (6,7) and onto (6,6)? (6,6) is water with no stone: pays 1.
    assert state.stones == (2, 3, 4)
    assert state.pedro == (6, 7)


def test_no_token_is_laid_on_a_square_already_holding_a_stone() -> None:
    """DECISIONS: a square that already holds a stone/log is free."""
    move = move_pedro(BOARD, (6, 6), "E2", frozenset({(6, 7), (6, 8)}), NO_PIRANHAS, 0)
    assert move.fall is None and move.laid == ()


def test_having_to_lay_a_stone_with_none_left_is_a_fall() -> None:
    """'The move round is broken off immediately as soon as a player has to lay a stone although he has
    none left.'"""
    move = move_pedro(BOARD, (4, 4), "E3", frozenset(), NO_PIRANHAS, 0)
    assert move.fall == NO_STONES and move.pedro == (4, 5) and move.laid == ()


def test_stones_laid_earlier_in_a_move_stay_on_the_board_after_a_fall() -> None:
    """DECISIONS: on a fall Pedro stays on the last square he safely entered; stones laid earlier in
    that move stay on the board."""
    move = move_pedro(BOARD, (6, 6), "E3", frozenset(), NO_PIRANHAS, 2)
    assert move.fall == NO_STONES and move.laid == ((6, 7), (6, 8)) and move.pedro == (6, 8)


def test_walking_over_the_edge_is_a_fall_even_with_plenty_of_stones() -> None:
    """'Even a player with plenty of stones left is punished if his card sends Pedro off the board.'"""
    move = move_pedro(BOARD, (1, 4), "N3", frozenset({(1, 4), (0, 4)}), NO_PIRANHAS, 40)
    assert move.fall == EDGE and move.pedro == (0, 4)


def test_stepping_onto_a_piranha_is_a_fall() -> None:
    """'has to move Pedro onto a piranha.'"""
    move = move_pedro(BOARD, (1, 0), "N1", frozenset({(1, 0)}), frozenset({(0, 0)}), 4)
    assert move.fall == PIRANHA and move.pedro == (1, 0)


def test_crossing_a_piranha_is_a_fall_and_pedro_stops_before_it() -> None:
    """'Pedro entering or crossing a space with a piranha ends the round in the same way.'"""
    move = move_pedro(BOARD, (8, 0), "E3", frozenset({(8, 0)}), frozenset({(8, 2)}), 4)
    assert move.fall == PIRANHA and move.pedro == (8, 1) and move.laid == ((8, 1),)


def test_an_empty_marked_square_is_ordinary_water() -> None:
    """DECISIONS: empty water (an empty marked square included) -> the mover lays a stone."""
    move = move_pedro(BOARD, (1, 0), "N1", frozenset({(1, 0)}), NO_PIRANHAS, 1)
    assert move.fall is None and move.laid == ((0, 0),)


def test_a_fall_breaks_the_move_round_off_at_once() -> None:
    """'The move round is broken off immediately' / 'Those players do not have to reveal their cards.'"""
    state = build(players=4, sombrero=0, pedro=(4, 4), stones=[4, 4, 4, 4])
    state = play(ORIGINAL, state, {0: "S2", 1: "S3", 2: "N1", 3: "W1"})
    # S2 from the palm: (5,4) sand, (6,4) water (1 stone). S3: (7,4), (8,4), (9,4) costs 3. Safe.
    assert state.phase == "choose_card"
    state = build(players=4, sombrero=0, pedro=(0, 4), board_stones=[(0, 4)], stones=[4, 4, 4, 4])
    state = play(ORIGINAL, state, {0: "E1", 1: "N1", 2: "S1", 3: "W1"})
    assert state.phase == "take_piranha" and state.fall["seat"] == 1 and state.fall["cause"] == EDGE
    assert [(seat, card) for _r, seat, card, _f in state.history] == [(0, "E1"), (1, "N1")]
    assert state.pending == ((), (), ("S1",), ("W1",))
    view = get_game(ORIGINAL).view(state, 1)
    assert "S1" not in str(view["history"]) and view["my_unrevealed"] == []
