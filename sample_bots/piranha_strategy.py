"""A heuristic Piranha Pedro player that uses only its view: avoid falls, keep the cheap cards.

For each candidate card (or ordered pair) it samples the unknown cards of the seats revealing before
it from their remaining hands, walks Pedro through the reveal order with the engine's own movement
rule, and scores the risk of falling, the stones spent and the refill value of the cards given up.
"""

from __future__ import annotations

import random
from typing import Any

from referee.games.piranha.board import Board, board_from_json
from referee.games.piranha.cards import FULL_SET
from referee.games.piranha.movement import move_pedro

SAMPLES = 48
FALL_COST = 100.0
STONE_COST = 1.5
REFILL_VALUE = {"1": 1.2, "2": 0.6, "3": 0.0}


def choose(request: dict[str, Any], rng: random.Random) -> Any:
    view = request["view"]
    decision = request["decision"]
    if decision == "take_piranha":
        return _nearest_piranha(view)
    if decision == "move_piranha":
        return None
    return _choose_cards(view, request["legal_actions"], rng)


def _board(view: dict[str, Any]) -> Board:
    data = {"name": view["board"]["name"], "rows": view["board"]["rows"]}
    if "fish_squares" in view["board"]:
        data["fish_squares"] = view["board"]["fish_squares"]
    return board_from_json(data)


def _nearest_piranha(view: dict[str, Any]) -> list[int]:
    pr, pc = view["pedro"]
    return min(view["piranhas"], key=lambda p: (abs(p[0] - pr) + abs(p[1] - pc), p))


def _choose_cards(view: dict[str, Any], legal: list[Any], rng: random.Random) -> Any:
    board = _board(view)
    me = view["seat"]
    order = [tuple(x) for x in view["reveal_order"]]
    remaining = {s: [c for c in FULL_SET if c not in set(view["played"][s])] for s in range(view["players"])}
    samples = []
    for _ in range(SAMPLES):
        guess = {}
        for seat, cards in remaining.items():
            if seat != me:
                count = view["commit_counts"][seat]
                guess[seat] = rng.sample(cards, min(count, len(cards)))
        samples.append(guess)
    best, best_score = legal[0], float("inf")
    for action in legal:
        mine = [action] if isinstance(action, str) else list(action)
        score = _score(board, view, me, order, mine, samples)
        if score < best_score:
            best, best_score = action, score
    return best


def _score(board: Board, view: dict[str, Any], me: int, order: list[tuple[int, int]], mine: list[str],
           samples: list[dict[int, list[str]]]) -> float:
    falls = spent = 0.0
    piranhas = frozenset(tuple(p) for p in view["piranhas"])
    stones0 = list(view["stones"])
    for guess in samples:
        pedro = tuple(view["pedro"])
        laid = frozenset(tuple(c) for c in view["board_stones"])
        stones = stones0[:]
        for seat, index in order:
            cards = mine if seat == me else guess.get(seat, [])
            if index >= len(cards):
                continue
            move = move_pedro(board, pedro, cards[index], laid, piranhas, stones[seat])
            pedro = move.pedro
            laid = laid | frozenset(move.laid)
            stones[seat] -= len(move.laid)
            if move.fall is not None:
                if seat == me:
                    falls += 1
                break  # the move round breaks off: later cards are never revealed
            if seat == me:
                spent += len(move.laid)
    n = len(samples)
    refill_lost = sum(REFILL_VALUE[c[1]] for c in mine)
    return FALL_COST * falls / n + STONE_COST * spent / n + refill_lost

