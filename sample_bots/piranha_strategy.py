"""A heuristic Piranha Pedro player that uses only its view: avoid falls, keep the cheap cards.

For each candidate card (or ordered pair) it samples the unknown cards of the seats revealing before
it from their remaining hands, walks Pedro through the reveal order with the engine's own movement
rule, and scores the risk of falling, the stones spent and the refill value of the cards given up.

Two-player games try up to 132 ordered pairs: the walks share a cache of single moves (few distinct
positions recur thousands of times), and the samples are taken in chunks so that a decision stops
adding chunks once ``TIME_SHARE`` of the request's ``deadline_ms`` is spent (a loaded machine once
made one decision take 1.1 s of a 1 s limit).
"""

from __future__ import annotations

import math
import random
import time
from typing import Any

from referee.games.piranha.board import Board, Cell, board_from_json
from referee.games.piranha.cards import FULL_SET
from referee.games.piranha.movement import move_pedro

SAMPLES = 48
FIRST_CHUNK = 2  # samples scored for every action first: the clock is read before each action
CHUNK = 6  # then chunks of this many samples; a chunk cut short by the clock is not counted
TIME_SHARE = 0.4  # of deadline_ms
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
    stop_at = time.perf_counter() + TIME_SHARE * float(request.get("deadline_ms") or 1000) / 1000
    return _choose_cards(view, request["legal_actions"], rng, stop_at)


def _board(view: dict[str, Any]) -> Board:
    data = {"name": view["board"]["name"], "rows": view["board"]["rows"]}
    if "fish_squares" in view["board"]:
        data["fish_squares"] = view["board"]["fish_squares"]
    return board_from_json(data)


def _nearest_piranha(view: dict[str, Any]) -> list[int]:
    pr, pc = view["pedro"]
    return min(view["piranhas"], key=lambda p: (abs(p[0] - pr) + abs(p[1] - pc), p))


def _choose_cards(view: dict[str, Any], legal: list[Any], rng: random.Random, stop_at: float | None = None) -> Any:
    scores = card_scores(view, legal, rng, SAMPLES, stop_at)
    best = min(range(len(legal)), key=lambda i: (scores[i], i))
    return legal[best]


def card_scores(view: dict[str, Any], legal: list[Any], rng: random.Random, samples: int = SAMPLES,
                stop_at: float | None = None) -> list[float]:
    """Each legal card's (or pair's) expected cost over ``samples`` guesses of the other seats' cards
    (lower is better). Past ``stop_at`` (a perf_counter time) only the whole chunks scored count; if
    even the first chunk is cut short, the actions it did not reach cost infinity."""
    board = _board(view)
    me = view["seat"]
    order = [tuple(x) for x in view["reveal_order"]]
    remaining = {s: [c for c in FULL_SET if c not in set(view["played"][s])] for s in range(view["players"])}
    guesses = []
    for _ in range(samples):
        guess = {}
        for seat, cards in remaining.items():
            if seat != me:
                count = view["commit_counts"][seat]
                guess[seat] = rng.sample(cards, min(count, len(cards)))
        guesses.append(guess)
    walk = _Walk(board, view)
    mines = [[action] if isinstance(action, str) else list(action) for action in legal]
    falls, spent = [0] * len(legal), [0] * len(legal)
    done = 0
    while done < samples:
        chunk = guesses[done: done + (FIRST_CHUNK if not done else CHUNK)]
        scored = []
        for mine in mines:
            if stop_at is not None and time.perf_counter() > stop_at:
                break
            scored.append(walk.run(me, order, mine, chunk))
        if len(scored) < len(mines):
            if not done:  # out of time in the first chunk: only the actions it reached can be chosen
                costs = [_cost(f, s, len(chunk), mine) for (f, s), mine in zip(scored, mines, strict=False)]
                return costs + [math.inf] * (len(mines) - len(scored))
            break
        falls = [a + f for a, (f, _) in zip(falls, scored, strict=True)]
        spent = [a + s for a, (_, s) in zip(spent, scored, strict=True)]
        done += len(chunk)
    return [_cost(falls[i], spent[i], max(1, done), mine) for i, mine in enumerate(mines)]


def _cost(falls: int, spent: int, samples: int, mine: list[str]) -> float:
    return FALL_COST * falls / samples + STONE_COST * spent / samples + sum(REFILL_VALUE[c[1]] for c in mine)


class _Walk:
    """Pedro's walk through the reveal order, each single move looked up in a cache: the engine's
    ``move_pedro`` depends only on where Pedro stands, the card, the stones laid and (up to 3) the
    mover's stones, and the same few positions recur across actions and samples."""

    def __init__(self, board: Board, view: dict[str, Any]) -> None:
        self.board = board
        self.piranhas = frozenset(tuple(p) for p in view["piranhas"])
        self.laid0 = frozenset(tuple(c) for c in view["board_stones"])
        self.pedro0 = tuple(view["pedro"])
        self.stones0 = list(view["stones"])
        self.cache: dict[tuple, tuple[Cell, tuple[Cell, ...], bool]] = {}

    def _move(self, pedro: Cell, card: str, extra: tuple[Cell, ...],
              stones: int) -> tuple[Cell, tuple[Cell, ...], bool]:
        key = (pedro, card, extra, min(stones, 3))
        hit = self.cache.get(key)
        if hit is None:
            laid = self.laid0.union(extra) if extra else self.laid0
            move = move_pedro(self.board, pedro, card, laid, self.piranhas, stones)
            hit = self.cache[key] = (move.pedro, move.laid, move.fall is not None)
        return hit

    def run(self, me: int, order: list[tuple[int, int]], mine: list[str],
            guesses: list[dict[int, list[str]]]) -> tuple[int, int]:
        """(falls of ours, stones we lay) summed over ``guesses``."""
        falls = spent = 0
        for guess in guesses:
            pedro, extra, stones = self.pedro0, (), self.stones0[:]
            for seat, index in order:
                cards = mine if seat == me else guess.get(seat, [])
                if index >= len(cards):
                    continue
                pedro, laid, fell = self._move(pedro, cards[index], extra, stones[seat])
                if laid:
                    extra = extra + laid
                    stones[seat] -= len(laid)
                if fell:
                    falls += seat == me
                    break  # the move round breaks off: later cards are never revealed
                if seat == me:
                    spent += len(laid)
        return falls, spent
