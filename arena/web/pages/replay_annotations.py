"""What one replay step did, in the viewer's words, read from the public views before and after it.

The game's own turn (Pajarracos' turn, Piranha Pedro's move round) is the one the step's decisions were
made in: the view before the step, never the view after it (which may already be the next turn). The
slider's label and the side panel both show this number, so they always agree. The referee's step
counter (``step["turn"]``) only feeds the commitments.

Piranha Pedro: which committed cards were revealed in the step and which went under the board unseen
because Pedro fell first, and the squares Pedro walked through (one square per arrow), so the viewer
draws his path instead of a line from his old square to his new one.
"""

from __future__ import annotations

from typing import Any

DIRECTIONS = {"N": (-1, 0), "E": (0, 1), "S": (1, 0), "W": (0, -1)}


def game_turn(before: dict[str, Any]) -> dict[str, Any] | None:
    """The game's turn a step belongs to, as the viewer prints it: {"label": "move round", "number": 5}."""
    if isinstance(before.get("move_round"), int):
        return {"label": "move round", "number": before["move_round"]}
    if isinstance(before.get("turn"), int):
        return {"label": "turn", "number": before["turn"]}
    return None


def step_reveals(before: dict[str, Any], after: dict[str, Any]) -> list[list[Any]]:
    """Piranha Pedro: the cards turned over during the step, in order, as [seat, card, fall cause or None]."""
    old, new = before.get("history") or [], after.get("history") or []
    if len(new) < len(old) or list(new[:len(old)]) != list(old):
        return []
    return [[entry[1], entry[2], entry[3]] for entry in new[len(old):]]


def committed_cards(action: Any, revealed: list[str]) -> list[dict[str, Any]]:
    """A choose_card action's cards in commitment order, each marked revealed or not (Pedro fell first)."""
    cards = action if isinstance(action, list) else [action]
    left = list(revealed)
    out = []
    for card in cards:
        shown = card in left
        if shown:
            left.remove(card)
        out.append({"card": card, "revealed": shown})
    return out


def pedro_path(before: dict[str, Any], reveals: list[list[Any]], after: dict[str, Any]) -> list[list[int]]:
    """Every square Pedro stood on during the step, from his square before it: one square per arrow of each
    revealed card, stopping where he fell (he stays on the last square he safely entered).

    Only orthogonal unit steps are ever emitted, so the drawn line follows the grid. A walk that does not
    end where the next view puts Pedro (a damaged or foreign document) yields no path rather than a wrong one.
    """
    start = before.get("pedro")
    if not isinstance(start, list) or len(start) != 2:
        return []
    fall_at = (after.get("fall") or {}).get("at")
    path = [list(start)]
    for seat_card in reveals:
        card, fell = str(seat_card[1]), seat_card[2]
        dr, dc = DIRECTIONS.get(card[:1], (0, 0))
        arrows = int(card[1:]) if card[1:].isdigit() else 0
        for _ in range(arrows):
            if fell and path[-1] == fall_at:
                break
            path.append([path[-1][0] + dr, path[-1][1] + dc])
        if fell:
            break
    if path[-1] != after.get("pedro"):
        return []
    return path if len(path) > 1 else []


def annotate_step(decisions: list[dict[str, Any]], before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """The viewer's notes on one step: its game turn and, for Piranha Pedro, cards and Pedro's path."""
    notes: dict[str, Any] = {"game_turn": game_turn(before)}
    if "pedro" not in before:
        return notes
    reveals = step_reveals(before, after)
    by_seat: dict[int, list[str]] = {}
    for seat, card, _fall in reveals:
        by_seat.setdefault(seat, []).append(card)
    for d in decisions:
        if d["decision"] == "choose_card":
            d["cards"] = committed_cards(d["action"], by_seat.get(d["seat"], []))
    notes["reveals"] = reveals
    notes["path"] = pedro_path(before, reveals, after)
    notes["hands_back"] = bool(reveals) and not after.get("fall") and not any(after.get("played") or [])
    return notes
