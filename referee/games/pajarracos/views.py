"""What a seat, or a spectator, may see of a Pajarracos state.

Public: every orchard (trees, their cards, crows, scarecrows), hand sizes, the reserve's size, the
discard pile (face up), whose turn and which decision, an extra action earned, scores so far.
Private: each hand (only its owner sees it) and the reserve's order (no one sees it).
Card sequences are the state's own immutable tuples (JSON arrays once encoded), so a view costs
little to build and cannot be used to change the state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from referee.games.pajarracos.state import OVER, PajarracosState

if TYPE_CHECKING:
    from referee.games.pajarracos.game import Pajarracos


def public_view(game: Pajarracos, state: PajarracosState) -> dict[str, Any]:
    over = state.phase == OVER
    orchards = []
    scores = []
    for orchard in state.orchards:
        trees = []
        total = largest = 0
        for tree in orchard:
            size = len(tree.cards)
            total += size
            if size > largest:
                largest = size
            trees.append(
                {
                    "fruit": tree.fruit,
                    "size": size,
                    "cards": tree.cards,
                    "crow": tree.crow,
                    "scarecrow": tree.scarecrow,
                }
            )
        orchards.append(trees)
        scores.append(total + largest)
    view: dict[str, Any] = {
        "game": game.spec.name,
        "players": state.rules.num_players,
        "phase": state.phase,
        "active": state.active,
        "to_act": [] if over else [state.active],
        "turn": state.turn,
        "extra_action_pending": state.shooed_out,
        "scarecrowed_this_action": state.scarecrowed,
        "hand_sizes": list(map(len, state.hands)),
        "reserve_size": len(state.reserve),
        "discard": state.discard,
        "orchards": orchards,
        "scores": scores,
        "juicy_per_fruit": dict(state.rules.juicy_items),
        "two_player_mode": state.rules.two_player_mode,
    }
    if over:
        view["result"] = game.result(state)
    return view


def seat_view(game: Pajarracos, state: PajarracosState, seat: int) -> dict[str, Any]:
    view = public_view(game, state)
    view["seat"] = seat
    view["hand"] = state.hands[seat]
    view["decision"] = view["phase"] if seat == state.active and state.phase != OVER else None
    return view
