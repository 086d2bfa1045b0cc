"""A Piranha Pedro search player: determinized Monte Carlo over its own candidate actions.

Each sampled world is a full engine state built from the view alone (``build_world``). What the view
hides is drawn to agree with it: the cards other seats committed but have not turned over (only
after a fall; drawn from each seat's remaining hand, 12 cards less its played ones) and, in the
Korean advanced game, the order of the barrel bag. The other seats' cards for the move round under
way are not hidden state but simultaneous choices: in each world they are drawn from a model of
each seat, a softmax of the heuristic's costs computed from that seat's side of the table (its hand
is public: 12 cards less its played ones). Against the heuristic bot that model is sharp; against
anyone else it is a sensible prior that avoids falls and keeps cheap cards.

From the root action a playout runs with a fast policy (each seat plays a random card among those
that do not throw Pedro in from where he stands, no piranha moves, the nearest piranha) until the
next fall has been settled, and is scored by the chance to end well from there: basic games,
1 - P(this seat is the one who loses) if every later fall strikes a seat at random; advanced game,
the expected share of opponents beaten on points. The root's candidates are the heuristic's best
few cards or pairs, every piranha to take, and "no move" plus the piranha moves near Pedro;
``search_core`` shares the time among them.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from functools import lru_cache
from itertools import accumulate, permutations
from typing import Any

from referee.games import get_game
from referee.games.piranha import rounds
from referee.games.piranha.board import board_from_json
from referee.games.piranha.cards import FULL_SET
from referee.games.piranha.editions import build_rules
from referee.games.piranha.game import PiranhaPedro
from referee.games.piranha.movement import move_pedro
from referee.games.piranha.state import CHOOSE_CARD, MOVE_PIRANHA, OVER, TAKE_PIRANHA, PiranhaState
from sample_bots import piranha_strategy
from sample_bots.search_core import Budget, Worlds, budget_for, halving_search

MAX_CANDIDATES = 10  # root arms for a card choice: the heuristic's best
PRIOR_SAMPLES = 24  # the heuristic's samples per candidate when ranking them
PRIOR_SHARE = 0.2  # of the time budget, at most, for that ranking (whole chunks of samples)
MODEL_SAMPLES = 12  # samples per choice when guessing how the other seats choose their cards
MODEL_SHARE = 0.1  # of the time budget, at most, for those guesses
MODEL_TEMPERATURE = 0.5  # cost units: how sharply the other seats are expected to prefer cheap cards
PLAYOUT_FALLS = 1  # a playout ends once this many falls are settled
HORIZON = 24  # move rounds a playout may last at most
PIRANHA_MOVE_REACH = 3  # Korean sombrero: consider piranha moves this close to Pedro (Manhattan)
POINTS_SCALE = 3.0  # advanced: a lead of this many points is worth about 73% against one opponent


def choose(request: dict[str, Any], rng: random.Random, budget: Budget | None = None,
           params: Mapping[str, Any] | None = None) -> Any:
    """The most visited root action; ``params`` are the match's parameters if the bot saw ``/start``."""
    budget = budget or budget_for(request)
    legal = request["legal_actions"]
    if len(legal) == 1:
        return legal[0]
    view = request["view"]
    game = get_game(request["game"])
    assert isinstance(game, PiranhaPedro)
    candidates = _candidates(view, request["decision"], legal, rng, budget)
    if len(candidates) == 1:
        return candidates[0]
    me = view["seat"]
    models = _opponent_models(view, rng, budget) if request["decision"] == CHOOSE_CARD else {}
    worlds = Worlds(rng.randrange(2**31), lambda r: build_world(game, view, r, params))

    def simulate(arm: int, k: int) -> float:
        return _playout(game, worlds.get(k), me, candidates[arm], worlds.playout_rng(k), budget, models)

    result = halving_search(len(candidates), simulate, budget)
    return candidates[result.best()]


# -- the root's candidates ---------------------------------------------------------------------------
def _candidates(view: dict[str, Any], decision: str, legal: list[Any], rng: random.Random,
                budget: Budget) -> list[Any]:
    if decision == TAKE_PIRANHA:
        return list(legal)
    if decision == MOVE_PIRANHA:
        pr, pc = view["pedro"]
        near = [m for m in legal[1:] if min(abs(c[0] - pr) + abs(c[1] - pc) for c in m) <= PIRANHA_MOVE_REACH]
        return [None, *near]
    scores = piranha_strategy.card_scores(view, legal, rng, PRIOR_SAMPLES, _share(budget, PRIOR_SHARE))
    ranked = sorted(range(len(legal)), key=lambda i: (scores[i], i))
    return [legal[i] for i in ranked[:MAX_CANDIDATES]]


def _opponent_models(view: dict[str, Any], rng: random.Random,
                     budget: Budget) -> dict[int, tuple[list[Any], list[float]]]:
    """Per other seat, its card choices of this move round and cumulative weights: a softmax of the
    heuristic's costs as that seat sees the table (its hand is public: 12 cards less its played ones).
    The other seats' root choices are drawn from these in every world."""
    models = {}
    for seat in range(view["players"]):
        if seat == view["seat"]:
            continue
        hand = [c for c in FULL_SET if c not in set(view["played"][seat])]
        choices: list[Any] = hand if view["commit_counts"][seat] == 1 else [list(p) for p in permutations(hand, 2)]
        costs = piranha_strategy.card_scores(dict(view, seat=seat), choices, rng, MODEL_SAMPLES,
                                             _share(budget, PRIOR_SHARE + MODEL_SHARE))
        low = min(costs)
        if low == math.inf:  # no time to score any: all alike
            costs, low = [0.0] * len(costs), 0.0
        weights = list(accumulate(math.exp(-(c - low) / MODEL_TEMPERATURE) for c in costs))
        models[seat] = (choices, weights)
    return models


def _share(budget: Budget, share: float) -> float | None:
    """When a preparatory step must stop: ``share`` of the time budget in (None with an iteration cap)."""
    return None if budget.max_iterations is not None else budget.started + share * (budget.stop_at - budget.started)


# -- a world from the view -----------------------------------------------------------------------------
def build_world(game: PiranhaPedro, view: dict[str, Any], rng: random.Random,
                params: Mapping[str, Any] | None = None) -> PiranhaState:
    """A full engine state that gives this seat exactly ``view``, its hidden parts drawn at random."""
    n, me = view["players"], view["seat"]
    board = {"name": view["board"]["name"], "rows": list(view["board"]["rows"])}
    if "fish_squares" in view["board"]:
        board["fish_squares"] = [list(c) for c in view["board"]["fish_squares"]]
    stones_total = None if view["supply"] is None else view["supply"] + sum(view["stones"]) + len(view["board_stones"])
    rule_params = {k: v for k, v in (params or {}).items() if k in ("max_move_rounds", "barrels", "score_final_round")}
    rule_params.update(board=board, loss_threshold=view["loss_threshold"], start_stones=0,
                       supply="unlimited" if stones_total is None else stones_total)
    rules = _rules(game.edition, game.advanced, n, rule_params)
    played = tuple(tuple(p) for p in view["played"])
    pending: list[tuple[str, ...]] = []
    hands: list[frozenset[str]] = []
    for seat in range(n):
        if seat == me:
            pending.append(tuple(view["my_unrevealed"]))
            hands.append(frozenset(view["hand"]))
            continue
        left = [c for c in FULL_SET if c not in played[seat]]
        unrevealed = len(left) - view["hand_sizes"][seat]  # committed, never turned over (after a fall)
        hidden = tuple(rng.sample(left, unrevealed)) if unrevealed > 0 else ()
        pending.append(hidden)
        hands.append(frozenset(left) - frozenset(hidden))
    bag, log = _barrels(rules.barrels, view, rng) if game.advanced else ((), ())
    return PiranhaState(
        rules=rules, seed=0, params={}, phase=view["phase"], sombrero=view["sombrero"],
        move_round=view["move_round"], pedro=tuple(view["pedro"]),
        board_stones=frozenset(tuple(c) for c in view["board_stones"]),
        piranhas=tuple(sorted(tuple(p) for p in view["piranhas"])), stones=tuple(view["stones"]),
        supply=view["supply"], taken=tuple(tuple(tuple(c) for c in t) for t in view["taken_squares"]),
        hands=tuple(hands), played=played, pending=tuple(pending),
        fall=dict(view["fall"]) if view["fall"] is not None else None,
        history=tuple(tuple(h) for h in view["history"]), barrel_bag=bag,
        kept_barrels=tuple(view.get("kept_barrels", (0,) * n)), scores=tuple(view.get("scores", (0,) * n)),
        barrel_log=log, stalled=bool(view.get("stalled", False)),
    )


_RULES_CACHE: dict[str, Any] = {}


def _rules(edition: str, advanced: bool, n: int, params: dict[str, Any]) -> Any:
    """Rules per (edition, params): building a board costs ~0.1 ms, a view change never needs a new one."""
    key = repr((edition, advanced, n, sorted(params.items())))
    rules = _RULES_CACHE.get(key)
    if rules is None:
        if len(_RULES_CACHE) > 64:
            _RULES_CACHE.clear()
        board_from_json(params["board"])  # fails early on a malformed board
        rules = _RULES_CACHE[key] = build_rules(edition, advanced, n, params)
    return rules


def _barrels(table: tuple[Mapping[str, Any], ...], view: dict[str, Any],
             rng: random.Random) -> tuple[tuple[int, ...], tuple[tuple[int, int, int, str], ...]]:
    """A bag order and a draw log that agree with the draws seen: each drawn effect takes a barrel of
    that effect; the rest is shuffled (the view only says how many are left)."""
    pool = list(range(len(table)))
    log = []
    for draw in view["barrel_draws"]:
        index = next((i for i in pool if dict(table[i]) == draw["effect"]), pool[0] if pool else 0)
        if index in pool:
            pool.remove(index)
        log.append((draw["round"], draw["seat"], index, draw["effect"]["effect"]))
    rng.shuffle(pool)
    return tuple(pool[: view["barrels_left"]]), tuple(log)


# -- playouts --------------------------------------------------------------------------------------------
def _playout(game: PiranhaPedro, world: PiranhaState, me: int, action: Any, rng: random.Random,
             budget: Budget, models: dict[int, tuple[list[Any], list[float]]]) -> float:
    """Play ``action`` (the others' cards drawn from their models), then the policy for everyone until
    a fall is settled."""
    actions = {}
    for seat in game.to_act(world):
        if seat == me:
            actions[seat] = action
        elif seat in models:
            choices, weights = models[seat]
            actions[seat] = rng.choices(choices, cum_weights=weights)[0]
        else:
            actions[seat] = _policy(world, seat, rng)
    state = game.apply(world, actions)
    settled = 1 if world.phase == TAKE_PIRANHA else 0
    last_round = world.move_round + HORIZON
    while state.phase != OVER and settled < PLAYOUT_FALLS and state.move_round <= last_round:
        budget.check()
        settling = state.phase == TAKE_PIRANHA
        state = game.apply(state, {seat: _policy(state, seat, rng) for seat in game.to_act(state)})
        settled += settling
    return _value(game, state, me)


def _policy(state: PiranhaState, seat: int, rng: random.Random) -> Any:
    """Fast default policy: no piranha moves, the nearest piranha, a random card that is safe from
    where Pedro stands (for a pair, the second safe from where the first leaves him)."""
    if state.phase == MOVE_PIRANHA:
        return None
    if state.phase == TAKE_PIRANHA:
        pr, pc = state.pedro
        return list(min(state.piranhas, key=lambda p: (abs(p[0] - pr) + abs(p[1] - pc), p)))
    hand = [c for c in FULL_SET if c in state.hands[seat]]
    piranhas = frozenset(state.piranhas)
    first, pedro, laid = _safe_card(state, seat, hand, state.pedro, state.board_stones, piranhas, rng)
    if rounds.commit_count(state, seat) == 1:
        return first
    rest = [c for c in hand if c != first]
    second, _, _ = _safe_card(state, seat, rest, pedro, laid, piranhas, rng)
    return [first, second]


def _safe_card(state: PiranhaState, seat: int, hand: list[str], pedro: tuple[int, int], laid: frozenset,
               piranhas: frozenset, rng: random.Random) -> tuple[str, tuple[int, int], frozenset]:
    board, stones = state.rules.board, state.stones[seat]
    safe = []
    for card in hand:
        move = move_pedro(board, pedro, card, laid, piranhas, stones)
        if move.fall is None:
            safe.append((card, move))
    if not safe:
        return rng.choice(hand), pedro, laid
    card, move = safe[rng.randrange(len(safe))]
    return card, move.pedro, laid | frozenset(move.laid) if move.laid else laid


# -- scoring the end of a playout -----------------------------------------------------------------------
def _value(game: PiranhaPedro, state: PiranhaState, me: int) -> float:
    n = state.num_players
    if game.advanced:
        if state.phase == OVER:
            ranks = game.result(state)["ranks"]
            return sum(ranks[me] < ranks[s] or (ranks[me] == ranks[s]) * 0.5 for s in range(n) if s != me) / (n - 1)
        mine = state.scores[me] + 0.5 * state.stones[me]
        return sum(1 / (1 + math.exp(-(mine - state.scores[s] - 0.5 * state.stones[s]) / POINTS_SCALE))
                   for s in range(n) if s != me) / (n - 1)
    counts = tuple(len(t) for t in state.taken)
    return 1.0 - _p_loses(counts, state.rules.loss_threshold, me)


@lru_cache(maxsize=4096)
def _p_loses(counts: tuple[int, ...], threshold: int, seat: int) -> float:
    """Chance ``seat`` is the first to reach ``threshold`` piranhas if each later fall hits a random seat."""
    if max(counts) >= threshold:
        return 1.0 if counts[seat] >= threshold else 0.0
    n = len(counts)
    return sum(_p_loses((*counts[:s], counts[s] + 1, *counts[s + 1:]), threshold, seat) for s in range(n)) / n

