"""What a seat, or a spectator, may see of a Piranha Pedro state.

Public: board, Pedro, stones on the board, remaining piranhas, stone counts, taken piranhas, the
sombrero, every revealed card. Private: a seat's hand and its committed but unrevealed cards; the
barrel bag's order is seen by no one. Unrevealed cards of a broken move round stay private for ever.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from referee.games.piranha import rounds
from referee.games.piranha.cards import sorted_cards
from referee.games.piranha.state import CHOOSE_CARD, OVER, PiranhaState

if TYPE_CHECKING:
    from referee.games.piranha.game import PiranhaPedro


def public_view(game: PiranhaPedro, state: PiranhaState) -> dict[str, Any]:
    rules = state.rules
    n = state.num_players
    view: dict[str, Any] = {
        "game": game.spec.name,
        "players": n,
        "phase": state.phase,
        "to_act": sorted(game.to_act(state)),
        "move_round": state.move_round,
        "sombrero": state.sombrero,
        "reveal_order": [[seat, index] for seat, index in rounds.reveal_order(state)],
        "commit_counts": [rounds.commit_count(state, s) for s in range(n)],
        "pedro": list(state.pedro),
        "board": _board_json(state),
        "board_stones": sorted([list(c) for c in state.board_stones]),
        "piranhas": [list(p) for p in state.piranhas],
        "stones": list(state.stones),
        "supply": state.supply,
        "piranhas_taken": [len(t) for t in state.taken],
        "taken_squares": [[list(c) for c in t] for t in state.taken],
        "loss_threshold": rules.loss_threshold,
        "hand_sizes": [len(h) for h in state.hands],
        "played": [list(p) for p in state.played],
        "history": list(state.history),
        "fall": dict(state.fall) if state.fall is not None else None,
    }
    if rules.advanced:
        view["scores"] = list(state.scores)
        view["barrels_left"] = len(state.barrel_bag)
        view["kept_barrels"] = list(state.kept_barrels)
        view["barrel_draws"] = [
            {"round": r, "seat": s, "effect": dict(rules.barrels[i])} for r, s, i, _ in state.barrel_log
        ]
    if state.phase == OVER:
        view["result"] = game.result(state)
        view["stalled"] = state.stalled
    return view


def seat_view(game: PiranhaPedro, state: PiranhaState, seat: int,
              public: dict[str, Any] | None = None) -> dict[str, Any]:
    """``public``: ``public_view(game, state)`` when the caller built it already for another seat; the
    view then shares its values (a shallow copy)."""
    view = public_view(game, state) if public is None else dict(public)
    view["seat"] = seat
    view["hand"] = sorted_cards(state.hands[seat])
    view["my_unrevealed"] = list(state.pending[seat])
    view["decision"] = state.phase if seat in game.to_act(state) else None
    if state.phase == CHOOSE_CARD:
        view["must_commit"] = rounds.commit_count(state, seat)
    return view


def _board_json(state: PiranhaState) -> dict[str, Any]:
    """Static terrain, built from immutable parts so every view can share them safely."""
    board = state.rules.board
    data: dict[str, Any] = {
        "name": board.name,
        "rows": board.rows,
        "height": board.height,
        "width": board.width,
        "palm": board.palm,
    }
    if state.rules.moving_piranhas:
        data["fish_squares"] = board.fish_squares
    return data
