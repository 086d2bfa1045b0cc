"""A heuristic Pajarracos player that uses only its view: grow one big tree, keep crows off it, send
crows to the leaders' big trees.

Every legal action is scored by a one-step lookahead: the action is carried out on a small model of
the table built from the view, the crows on our own trees eat as they would at the end of the turn,
and the resulting position gets one number (``_Table.value``):

    our points + what our hand and future draws may still add - what crows may still take from us
    - (a mix of the best and the average opponent's points, less what crows are about to take from them)

What is hidden (the reserve and the other hands) is estimated from what is not yet seen: the 65
cards minus our hand, the discard pile and everything on the trees. An action that earns an extra
action (a shoo-out) is worth the best follow-up found in a few candidate plays. No search beyond
that: a decision costs a few milliseconds.

The weights below were tuned by playing seeded in-process matches against random players and
against a simple greedy rule player (largest fruit play on its own trees, shoo every crow, crows
on the biggest trees); ``python -m bench.bots_strength`` measures the result against random.
"""

from __future__ import annotations

import functools
import math
import random
from typing import Any

FRUITS = ("cherries", "apples", "oranges", "bananas", "grapes")
CROW, FLOCK, SCARECROW = "crow", "flock", "scarecrow"
CARDS_PER_FRUIT, SCARECROWS, CROWS, FLOCKS = 9, 10, 8, 2
HAND_SIZE = 5

LEADER_WEIGHT = 0.9  # the opponents' side: this much of the leader's points, the rest their mean
HAND_DISCOUNT = 0.95  # a fruit card kept in hand is worth this share of a card already on a tree
SCARECROW_VALUE = 0.6  # a scarecrow in hand, besides the threats it answers (``_Table.exposure``)
CROW_VALUE = 0.25  # a lone crow card in hand
FLOCK_SHARE = 0.35  # a flock in hand: this share of the most it could take from the opponents now
JUICY_BONUS = 0.2  # a juicy card can pull a crow away: worth a little more than an ordinary one
AGGRESSION = 0.6  # how likely an opponent holding a crow card plays it before our next turn
LONE_CROW_MEALS = 2.5  # a lone crow left alone eats about this many cards before it is shooed
RESPONSE = 0.5  # how likely a player holding a scarecrow uses it on a crowed tree in time (tuned)
SPOT_FLOOR = 10  # an opponent's other uses of a turn, as if that many more cards of free trees stood around
LEADER_SPREAD = 2.0  # points: opponents this close to the leader share the leader's weight (a soft maximum)
FLOCK_FLOOR = 1.0  # a flock in hand is worth at least this much
END_FACTOR = 0.6  # with the reserve empty, cards in hand are worth this share of HAND_DISCOUNT

Tree = tuple[int, Any, bool]  # (size, crow: None | "crow" | "flock", scarecrow)
Orchard = dict[str, Tree]


def choose(request: dict[str, Any], rng: random.Random) -> Any:
    """The legal action whose resulting position scores best (the first one listed on ties)."""
    legal = request["legal_actions"]
    if len(legal) == 1:
        return legal[0]
    table = _Table(request["view"])
    pending = bool(request["view"].get("extra_action_pending"))
    best, best_value = legal[0], float("-inf")
    for action in legal:
        value = table.evaluate(action, pending)
        if value > best_value:
            best, best_value = action, value
    return best


def _score(sizes: list[float]) -> float:
    """All fruit plus the largest tree once more (sizes may be fractional estimates)."""
    return sum(sizes) + max(sizes, default=0)


def _soft_max(values: list[float]) -> float:
    """About the largest value, but values within ``LEADER_SPREAD`` of it count almost as much: a
    crow on either of two tied leaders helps."""
    top = max(values)
    return top + LEADER_SPREAD * math.log(sum(math.exp((v - top) / LEADER_SPREAD) for v in values))


def _orchard_score(orchard: Orchard) -> float:
    return _score([tree[0] for tree in orchard.values()])


# The model's tree sizes are whole numbers, so what a crow eats is worked out from the tree's size and
# the largest other tree alone, exactly as from the whole orchard's score before and after: the search
# runs these thousands of times per decision (``pajarracos_search``).
def _drop(orchard: Orchard, fruit: str, cards: int) -> float:
    """Points lost if ``cards`` cards (all of them if more) are eaten from ``fruit``'s tree."""
    tree = orchard.get(fruit)
    if tree is None:
        return 0
    return _drop_from(tree[0], max((t[0] for name, t in orchard.items() if name != fruit), default=0), cards)


def _drop_from(size: int, rest: int, cards: int) -> int:
    """``_drop`` for a tree of ``size`` beside a largest other tree of ``rest`` (0: none)."""
    eaten = min(cards, size)
    if eaten <= 0:
        return 0
    return eaten + max(rest, size) - max(rest, size - eaten)


def _lone_crow_meals(size: int, rest: int) -> float:
    """Points a lone crow takes before it is shooed: a few cards' worth, never more than the tree
    (a tree of ``size`` beside a largest other tree of ``rest``)."""
    return min(LONE_CROW_MEALS * _drop_from(size, rest, 1), _drop_from(size, rest, CARDS_PER_FRUIT))


def _largest_others(orchard: Orchard) -> dict[str, int]:
    """Per tree, the size of the largest other tree in its orchard (0 if none)."""
    first = second = 0
    for size, _, _ in orchard.values():
        if size > first:
            first, second = size, first
        elif size > second:
            second = size
    return {fruit: second if tree[0] == first else first for fruit, tree in orchard.items()}


def _free_size(orchard: Orchard) -> int:
    """Cards on the trees of an orchard that a crow may still land on."""
    return sum(t[0] for t in orchard.values() if t[1] is None and not t[2])


@functools.lru_cache(maxsize=4096)  # a few hundred distinct counts per match; asked thousands of times in a search
def _p_holds(unseen: int, copies: int, hand: int) -> float:
    """Chance that a hand of ``hand`` cards dealt from ``unseen`` cards holds one of ``copies``."""
    if copies <= 0 or hand <= 0 or unseen <= 0:
        return 0.0
    miss = 1.0
    for i in range(min(hand, unseen)):
        miss *= max(0, unseen - copies - i) / (unseen - i)
    return 1.0 - miss


class _Table:
    """The view as a small mutable model, plus what every evaluation of this decision shares."""

    def __init__(self, view: dict[str, Any]) -> None:
        self.me = view["seat"]
        self.players = view["players"]
        self.reserve = view["reserve_size"]
        self.hand = list(view["hand"])
        self.orchards: list[Orchard] = [
            {t["fruit"]: (t["size"], t["crow"], t["scarecrow"]) for t in trees} for trees in view["orchards"]
        ]
        unseen = self._unseen(view)
        self.unseen_total = max(1, self.reserve + sum(s for i, s in enumerate(view["hand_sizes"]) if i != self.me))
        self.opponents = [s for s in range(self.players) if s != self.me]
        sizes = view["hand_sizes"]
        self.p_flock = {s: AGGRESSION * _p_holds(self.unseen_total, unseen[FLOCK], sizes[s]) for s in self.opponents}
        self.p_crow = {s: AGGRESSION * _p_holds(self.unseen_total, unseen[CROW], sizes[s]) for s in self.opponents}
        self.p_scare = {s: RESPONSE * _p_holds(self.unseen_total, unseen[SCARECROW], sizes[s]) for s in self.opponents}
        self.unseen_scarecrows = unseen[SCARECROW]
        # fruit cards of each kind we may still draw: each unseen one is in the reserve with chance
        # reserve/unseen, and then ours with chance about 1/players
        share = self.reserve / self.unseen_total / self.players
        self.future = {f: unseen[f] * share for f in FRUITS}
        self.discount = HAND_DISCOUNT if self.reserve else HAND_DISCOUNT * END_FACTOR
        # most actions leave most orchards as they are (the same dict): their parts are worked out once
        self.base_free = [_free_size(o) for o in self.orchards]
        self.base_theirs = {s: self._their_points(self.orchards[s], s) for s in self.opponents}
        self.p_answer_after = [RESPONSE * _p_holds(self.unseen_total, self.unseen_scarecrows, draws)
                               for draws in range(HAND_SIZE + 1)]
        self.flock_value = self._flock_value()
        self.new_card = self._new_card_value(unseen)

    def _unseen(self, view: dict[str, Any]) -> dict[str, int]:
        """Cards in the reserve or the other hands, per fruit kind (juicy counted in) and per bird."""
        left = dict.fromkeys(FRUITS, CARDS_PER_FRUIT)
        left.update({CROW: CROWS, FLOCK: FLOCKS, SCARECROW: SCARECROWS})
        seen = [*view["hand"], *view["discard"]]
        for trees in view["orchards"]:
            for tree in trees:
                seen.extend(tree["cards"])
                if tree["crow"]:
                    seen.append(tree["crow"])
                if tree["scarecrow"]:
                    seen.append(SCARECROW)
        for card in seen:
            left[card.rstrip("*")] -= 1
        return {name: max(0, count) for name, count in left.items()}

    def _new_card_value(self, unseen: dict[str, int]) -> float:
        """What a card drawn from the reserve is worth in hand, on average over what is unseen."""
        total = sum(unseen.values())
        if not total:
            return 0.0
        fruit = sum(unseen[f] for f in FRUITS) * self.discount
        birds = unseen[SCARECROW] * SCARECROW_VALUE + unseen[CROW] * CROW_VALUE + unseen[FLOCK] * self.flock_value
        return (fruit + birds) / total

    # -- carrying out an action on the model -----------------------------------------------------
    def evaluate(self, action: dict[str, Any], pending: bool) -> float:
        """The value of the position after ``action`` and whatever ends the turn."""
        orchards, hand, extra = self._apply(self.orchards, self.hand, action, pending)
        if extra and hand:
            return self._best_follow_up(orchards, hand)
        return self.value(self._eat(orchards), hand)

    def _apply(self, orchards: list[Orchard], hand: list[str], action: dict[str, Any],
               pending: bool) -> tuple[list[Orchard], list[str], bool]:
        """(orchards, hand, an extra action follows) once ``action`` is done and its action ends."""
        kind = action["type"]
        orchards = list(orchards)
        if kind == "fruit":
            cards = action["cards"]
            target, fruit = action["orchard"], cards[0].rstrip("*")
            size, crow, scare = orchards[target].get(fruit, (0, None, False))
            if "crow_from" in action:
                src = action["crow_from"]
                s_orch = orchards[src["orchard"]] = dict(orchards[src["orchard"]])
                s_size, crow, s_scare = s_orch[src["fruit"]]
                s_orch[src["fruit"]] = (s_size, None, s_scare)
            orchards[target] = {**orchards[target], fruit: (size + len(cards), crow, scare)}
            return orchards, _without(hand, cards), False
        if kind == "crow":
            seat, fruit = action["orchard"], action["fruit"]
            size, _, scare = orchards[seat][fruit]
            orchards[seat] = {**orchards[seat], fruit: (size, action["card"], scare)}
            return orchards, _without(hand, [action["card"]]), False
        if kind == "scarecrow":
            mine = orchards[self.me] = dict(orchards[self.me])
            fruit, mode = action["fruit"], action["mode"]
            size, crow, _ = mine[fruit]
            hand = _without(hand, [SCARECROW])
            if mode == "protect":
                mine[fruit] = (size, None, True)
                return orchards, hand, pending
            mine[fruit] = (size, None, False)
            if mode == "shoo_out":
                return orchards, hand, True
            to = action["to"]
            t_size, _, t_scare = orchards[to["orchard"]][to["fruit"]]
            orchards[to["orchard"]] = {**orchards[to["orchard"]], to["fruit"]: (t_size, crow, t_scare)}
            return orchards, hand, False
        if kind == "discard":
            return orchards, _without(hand, action["cards"]), False
        return orchards, hand, pending  # done

    def _eat(self, orchards: list[Orchard]) -> list[Orchard]:
        """The crows on our trees eat at the end of our turn: a lone crow one card, a flock all."""
        mine = orchards[self.me]
        if not any(tree[1] for tree in mine.values()):
            return orchards
        eaten: Orchard = {}
        for fruit, (size, crow, scare) in mine.items():
            if crow == CROW and size > 1:
                eaten[fruit] = (size - 1, crow, scare)
            elif crow is None:
                eaten[fruit] = (size, crow, scare)
        return [eaten if seat == self.me else orchard for seat, orchard in enumerate(orchards)]

    def _best_follow_up(self, orchards: list[Orchard], hand: list[str]) -> float:
        """An extra action: the best of a few plain candidates (all of one fruit on our own tree, one
        crow card on any free tree), or nothing."""
        best = self.value(self._eat(orchards), hand)
        mine = orchards[self.me]
        crows_out = any(tree[1] for orchard in orchards for tree in orchard.values())
        for fruit in FRUITS:
            tree = mine.get(fruit)
            if tree is not None and (tree[1] or tree[2]):
                continue
            cards = [c for c in hand if c == fruit or (c == fruit + "*" and not crows_out)]
            if cards:
                action = {"type": "fruit", "orchard": self.me, "cards": cards}
                after, rest, _ = self._apply(orchards, hand, action, False)
                best = max(best, self.value(self._eat(after), rest))
        for card in {c for c in hand if c in (CROW, FLOCK)}:
            for seat in self.opponents:
                for fruit, (_, crow, scare) in orchards[seat].items():
                    if crow is None and not scare:
                        action = {"type": "crow", "card": card, "orchard": seat, "fruit": fruit}
                        after, rest, _ = self._apply(orchards, hand, action, False)
                        best = max(best, self.value(self._eat(after), rest))
        return best

    # -- the value of a position at the end of our turn ---------------------------------------------
    def value(self, orchards: list[Orchard], hand: list[str]) -> float:
        mine = orchards[self.me]
        draws = min(HAND_SIZE - len(hand), self.reserve)
        p_answer = self._p_answer(hand, draws)
        ours = (_orchard_score(mine) + self._hand_value(orchards, hand) + draws * self.new_card
                - self.exposure(orchards, p_answer))
        return ours - self._their_side(orchards)

    def _their_side(self, orchards: list[Orchard]) -> float:
        """The opponents' points less what crows are about to take, mostly the leader's."""
        base, same = self.base_theirs, self.orchards
        return _combine([base[s] if orchards[s] is same[s] else self._their_points(orchards[s], s)
                         for s in self.opponents])

    def _their_points(self, orchard: Orchard, seat: int) -> float:
        return _orchard_score(orchard) - self._crow_losses(orchard, self.p_scare[seat])

    def _p_answer(self, hand: list[str], draws: int) -> float:
        """Chance we hold a scarecrow at our next turn, to answer a crow sent meanwhile."""
        if SCARECROW in hand:
            return RESPONSE
        return self.p_answer_after[max(0, draws)]

    def _hand_value(self, orchards: list[Orchard], hand: list[str]) -> float:
        """Points our hand and expected draws may still add to our orchard (fruit on a crowed tree
        half, on a protected tree nothing), and what the bird cards are worth."""
        mine = orchards[self.me]
        sizes = []
        add = dict.fromkeys(FRUITS, 0.0)
        birds = 0.0
        for card in hand:
            if card == SCARECROW:
                birds += SCARECROW_VALUE
            elif card == CROW:
                birds += CROW_VALUE
            elif card == FLOCK:
                birds += self.flock_value
            elif card in add:
                add[card] += 1
            elif card.rstrip("*") in add:
                add[card.rstrip("*")] += 1 + JUICY_BONUS
        for fruit in FRUITS:
            size, crow, scare = mine.get(fruit, (0, None, False))
            weight = 0.0 if scare else 0.5 if crow else 1.0
            sizes.append(size + weight * (add[fruit] + self.future[fruit]))
        return self.discount * (_score(sizes) - _orchard_score(mine)) + birds

    def _flock_value(self) -> float:
        """A flock in hand: a share of the most it would take from the opponents' side now."""
        theirs = [self.base_theirs[s] for s in self.opponents]
        before = _combine(theirs)
        best = 0.0
        for i, seat in enumerate(self.opponents):
            for fruit, (size, crow, scare) in self.orchards[seat].items():
                if crow is None and not scare:
                    after = list(theirs)
                    after[i] = self._their_points({**self.orchards[seat], fruit: (size, FLOCK, scare)}, seat)
                    best = max(best, before - _combine(after))
        return max(FLOCK_FLOOR, FLOCK_SHARE * best)

    def _crow_losses(self, orchard: Orchard, p_answer: float) -> float:
        """What the crows sitting on this orchard will likely eat before their owner shoos them."""
        loss = 0.0
        rest = None
        for fruit, (size, crow, _) in orchard.items():
            if crow is None:
                continue
            rest = rest or _largest_others(orchard)
            if crow == FLOCK:
                loss += (1 - p_answer) * _drop_from(size, rest[fruit], CARDS_PER_FRUIT)
            elif crow == CROW:
                loss += (1 - p_answer) * _lone_crow_meals(size, rest[fruit])
        return loss

    def exposure(self, orchards: list[Orchard], p_answer: float) -> float:
        """What crows may take from us before the end of our next turn: those already on our trees,
        and those the opponents may send (onto free trees, bigger trees more likely)."""
        mine = orchards[self.me]
        loss = self._crow_losses(mine, p_answer)
        base, same = self.base_free, self.orchards
        free = [base[s] if o is same[s] else _free_size(o) for s, o in enumerate(orchards)]
        total = sum(free)
        spots = [(self.p_flock[seat], self.p_crow[seat], total - free[seat] + SPOT_FLOOR) for seat in self.opponents]
        rest = _largest_others(mine)
        for fruit, (size, crow, scare) in mine.items():
            if crow is not None or scare:
                continue
            hit_flock = hit_crow = 0.0
            for p_flock, p_crow, room in spots:
                hit_flock += p_flock * size / room
                hit_crow += p_crow * size / room
            loss += (1 - p_answer) * (hit_flock * _drop_from(size, rest[fruit], CARDS_PER_FRUIT)
                                      + hit_crow * _lone_crow_meals(size, rest[fruit]))
        return loss


def _combine(theirs: list[float]) -> float:
    """The opponents' side from each one's points: mostly the leader's, the rest their mean."""
    return LEADER_WEIGHT * _soft_max(theirs) + (1 - LEADER_WEIGHT) * sum(theirs) / len(theirs)


def _without(hand: list[str], cards: list[str]) -> list[str]:
    rest = list(hand)
    for card in cards:
        rest.remove(card)
    return rest
