"""The stages of a move round, each a function from a cloned state to the next state.

A move round: (Korean) the sombrero may move one piranha -> every seat commits its card(s) ->
reveal in sombrero order, moving Pedro after each -> either all revealed (sombrero passes left; when
every card has been played everyone takes the 12 back) or a fall (the guilty seat takes a piranha of
its choice -> loss check -> evaluation -> sombrero passes left).
"""

from __future__ import annotations

from referee.games.piranha.board import Cell
from referee.games.piranha.cards import FULL_HAND, arrows, refill
from referee.games.piranha.movement import move_pedro
from referee.games.piranha.state import CHOOSE_CARD, MOVE_PIRANHA, OVER, TAKE_PIRANHA, PiranhaState


def reveal_order(state: PiranhaState) -> list[tuple[int, int]]:
    """(seat, commitment index) pairs in the order the cards are turned over."""
    n, s = state.num_players, state.sombrero
    return [((s + offset) % n, index) for offset, index in state.rules.reveal_pattern]


def commit_count(state: PiranhaState, seat: int) -> int:
    """How many cards ``seat`` lays face down this move round."""
    n = state.num_players
    return state.rules.commit_counts[(seat - state.sombrero) % n]


def start_move_round(state: PiranhaState) -> PiranhaState:
    """Open the next move round, or end a match that hit the move-round cap."""
    if state.move_round > state.rules.max_move_rounds:
        state.phase = OVER
        state.stalled = True
        return state
    state.phase = MOVE_PIRANHA if state.rules.moving_piranhas else CHOOSE_CARD
    return state


def move_piranha(state: PiranhaState, move: tuple[Cell, Cell] | None) -> PiranhaState:
    """Korean: the sombrero may move one piranha to another empty fish square, before cards are chosen."""
    if move is not None:
        src, dst = move
        state.piranhas = tuple(sorted((*(p for p in state.piranhas if p != src), dst)))
    state.phase = CHOOSE_CARD
    return state


def commit_and_reveal(state: PiranhaState, commitments: dict[int, tuple[str, ...]]) -> PiranhaState:
    """Everyone's cards leave the hand face down; then they are revealed one by one in order."""
    state.hands = tuple(hand - set(commitments[seat]) for seat, hand in enumerate(state.hands))
    state.pending = tuple(commitments[seat] for seat in range(state.num_players))
    for seat, _index in reveal_order(state):
        card = state.pending[seat][0]
        pending = list(state.pending)
        pending[seat] = pending[seat][1:]
        state.pending = tuple(pending)
        if _reveal(state, seat, card):
            return state
    return _end_move_round(state)


def _reveal(state: PiranhaState, seat: int, card: str) -> bool:
    """Turn ``card`` over and move Pedro; True when he fell (the move round breaks off)."""
    move = move_pedro(
        state.rules.board, state.pedro, card, state.board_stones, frozenset(state.piranhas), state.stones[seat]
    )
    state.pedro = move.pedro
    if move.laid:
        state.board_stones = state.board_stones | frozenset(move.laid)
        state.stones = _add(state.stones, seat, -len(move.laid))
    state.history = (*state.history, (state.move_round, seat, card, move.fall))
    state.played = _replace(state.played, seat, (*state.played[seat], card))
    if move.fall is not None:
        state.phase = TAKE_PIRANHA
        state.fall = {"seat": seat, "card": card, "cause": move.fall, "at": list(move.pedro)}
        return True
    if state.rules.advanced and arrows(card) == 3:
        _draw_barrel(state, seat)
    return False


def _draw_barrel(state: PiranhaState, seat: int) -> None:
    """Advanced: a safe 3-arrow move draws a random barrel (if any are left) and resolves it at once."""
    if not state.barrel_bag:
        return
    index, state.barrel_bag = state.barrel_bag[0], state.barrel_bag[1:]
    effect = state.rules.barrels[index]
    if effect["effect"] == "keep":
        state.kept_barrels = _add(state.kept_barrels, seat, 1)
    else:
        gained = _take_from_supply(state, effect["amount"])
        state.stones = _add(state.stones, seat, gained)
    state.barrel_log = (*state.barrel_log, (state.move_round, seat, index, effect["effect"]))


def _take_from_supply(state: PiranhaState, wanted: int) -> int:
    if state.supply is None:
        return wanted
    got = min(wanted, state.supply)
    state.supply -= got
    return got


def _end_move_round(state: PiranhaState) -> PiranhaState:
    """Every card of the round revealed without a fall."""
    if not any(state.hands):
        # All 12 cards played: everyone takes them back; no evaluation, stones unchanged.
        state.hands = (FULL_HAND,) * state.num_players
        state.played = ((),) * state.num_players
    return _next_move_round(state)


def _next_move_round(state: PiranhaState) -> PiranhaState:
    state.sombrero = (state.sombrero + 1) % state.num_players
    state.move_round += 1
    return start_move_round(state)


def take_piranha(state: PiranhaState, square: Cell) -> PiranhaState:
    """The guilty seat takes the piranha of its choice; then the loss check and the evaluation."""
    assert state.fall is not None
    guilty = state.fall["seat"]
    state.piranhas = tuple(p for p in state.piranhas if p != square)
    state.taken = _replace(state.taken, guilty, (*state.taken[guilty], square))
    lost = len(state.taken[guilty]) >= state.rules.loss_threshold
    if state.rules.advanced and (not lost or state.rules.score_final_round):
        _score_round(state, guilty)
    if lost:
        state.phase = OVER
        return state
    _evaluate(state)
    state.fall = None
    return _next_move_round(state)


def _score_round(state: PiranhaState, guilty: int) -> None:
    """Advanced: unused logs and barrels become points, except for the seat that took the piranha;
    then every remaining log and barrel is discarded (logs go back to the supply). The game-ending
    round's exchange is the same: no log or barrel is left in front of anyone."""
    state.scores = tuple(
        score + (0 if seat == guilty else state.stones[seat] + state.kept_barrels[seat])
        for seat, score in enumerate(state.scores)
    )
    _return_stones(state)
    state.kept_barrels = (0,) * state.num_players


def _return_stones(state: PiranhaState) -> None:
    """Every seat's unused stones go back to the general supply."""
    if state.supply is not None:
        state.supply += sum(state.stones)
    state.stones = (0,) * state.num_players


def _evaluate(state: PiranhaState) -> None:
    """Return unused stones; refill for the cards still in hand, unless the supply cannot cover every
    refill (then nobody gets any); everyone takes all 12 cards back. Unrevealed cards stay private."""
    _return_stones(state)
    refills = tuple(refill(hand) for hand in state.hands)
    if state.supply is None:
        state.stones = refills
    elif sum(refills) <= state.supply:
        state.supply -= sum(refills)
        state.stones = refills
    else:
        state.stones = (0,) * state.num_players
    state.hands = (FULL_HAND,) * state.num_players
    state.played = ((),) * state.num_players
    state.pending = ((),) * state.num_players


def _add(values: tuple[int, ...], seat: int, amount: int) -> tuple[int, ...]:
    return _replace(values, seat, values[seat] + amount)


def _replace(values: tuple, seat: int, value: object) -> tuple:
    return (*values[:seat], value, *values[seat + 1 :])
