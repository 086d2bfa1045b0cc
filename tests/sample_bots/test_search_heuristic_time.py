"""The heuristic Piranha Pedro strategy answers in time, whatever the machine's load.

Its Monte Carlo over ordered card pairs once took 1,145 ms of a 1,000 ms limit in a two-player Korean
advanced game. Now single moves are cached (same scores as before: checked against a plain walk
here) and the samples come in chunks, stopping at 40% of ``deadline_ms``; these tests slow the walk
down on purpose to show the clock, not the machine, bounds a decision.
"""

from __future__ import annotations

import json
import random
import time

import pytest

from referee.games import get_game
from referee.games.piranha.cards import FULL_SET
from referee.games.piranha.movement import move_pedro
from sample_bots import piranha_strategy
from sample_bots.piranha_strategy import card_scores, choose

ADVANCED = "piranha-pedro-ko-advanced"


def _request(game_name: str, players: int, seed: int, moves: int = 0, deadline_ms: int = 1000) -> dict:
    """The first card choice after ``moves`` random steps of a seeded match."""
    game = get_game(game_name)
    state = game.initial_state(players, seed)
    rng = random.Random(seed)
    while moves or state.phase != "choose_card":
        if state.phase == "choose_card":
            moves -= 1
        state = game.apply(state, {s: rng.choice(game.legal_actions(state, s)) for s in game.to_act(state)})
        assert not game.is_terminal(state)
    return {"game": game_name, "view": json.loads(json.dumps(game.view(state, 0))), "decision": "choose_card",
            "legal_actions": game.legal_actions(state, 0), "deadline_ms": deadline_ms}


def _plain_scores(view: dict, legal: list, rng: random.Random, samples: int) -> list[float]:
    """The strategy's scores as first written: every sample walked with the engine, nothing cached."""
    board = piranha_strategy._board(view)
    me = view["seat"]
    order = [tuple(x) for x in view["reveal_order"]]
    remaining = {s: [c for c in FULL_SET if c not in set(view["played"][s])] for s in range(view["players"])}
    guesses = [{s: rng.sample(cards, min(view["commit_counts"][s], len(cards)))
                for s, cards in remaining.items() if s != me} for _ in range(samples)]
    out = []
    for action in legal:
        mine = [action] if isinstance(action, str) else list(action)
        falls = spent = 0
        for guess in guesses:
            pedro, laid = tuple(view["pedro"]), frozenset(tuple(c) for c in view["board_stones"])
            stones = list(view["stones"])
            for seat, index in order:
                cards = mine if seat == me else guess.get(seat, [])
                if index >= len(cards):
                    continue
                move = move_pedro(board, pedro, cards[index], laid, frozenset(tuple(p) for p in view["piranhas"]),
                                  stones[seat])
                pedro, laid = move.pedro, laid | frozenset(move.laid)
                stones[seat] -= len(move.laid)
                if move.fall is not None:
                    falls += seat == me
                    break
                if seat == me:
                    spent += len(move.laid)
        refill = sum(piranha_strategy.REFILL_VALUE[c[1]] for c in mine)
        out.append(piranha_strategy.FALL_COST * falls / samples + piranha_strategy.STONE_COST * spent / samples
                   + refill)
    return out


@pytest.mark.parametrize(("game_name", "players", "moves"), [
    ("piranha-pedro", 2, 3), ("piranha-pedro-ko", 2, 5), (ADVANCED, 2, 2), (ADVANCED, 3, 4), ("piranha-pedro", 5, 1),
])
def test_cached_walks_score_exactly_as_the_plain_walk(game_name: str, players: int, moves: int) -> None:
    request = _request(game_name, players, seed=11, moves=moves)
    view, legal = request["view"], request["legal_actions"]
    assert card_scores(view, legal, random.Random(5), 48) == _plain_scores(view, legal, random.Random(5), 48)


def test_the_worst_case_decision_is_far_inside_the_limit() -> None:
    """Two-player Korean advanced, full hand: 132 ordered pairs x 48 samples."""
    request = _request(ADVANCED, 2, seed=3)
    assert len(request["legal_actions"]) == 132
    started = time.perf_counter()
    action = choose(request, random.Random(0))
    assert time.perf_counter() - started < 0.4 + 0.2
    assert action in request["legal_actions"]


@pytest.mark.parametrize("deadline_ms", [1000, 300])
def test_a_slow_machine_still_answers_in_time(monkeypatch: pytest.MonkeyPatch, deadline_ms: int) -> None:
    """Every walk made 3 ms slower: all 132 pairs x 48 samples would take about 3 s."""
    real_run = piranha_strategy._Walk.run

    def slow_run(self, *args):
        time.sleep(0.003)
        return real_run(self, *args)

    monkeypatch.setattr(piranha_strategy._Walk, "run", slow_run)
    request = _request(ADVANCED, 2, seed=3, deadline_ms=deadline_ms)
    started = time.perf_counter()
    action = choose(request, random.Random(0))
    elapsed = time.perf_counter() - started
    assert elapsed < piranha_strategy.TIME_SHARE * deadline_ms / 1000 + 0.1, elapsed
    assert action in request["legal_actions"]


def test_out_of_time_in_the_first_chunk_picks_among_the_actions_scored() -> None:
    request = _request(ADVANCED, 2, seed=3)
    scores = card_scores(request["view"], request["legal_actions"], random.Random(0), stop_at=time.perf_counter())
    assert scores == [float("inf")] * len(scores)  # nothing scored: the first legal action, still legal
