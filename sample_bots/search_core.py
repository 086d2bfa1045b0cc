"""What the search bots share: a time budget read from the request, and the bandit at the root.

The search is determinized Monte Carlo (PIMC): world k is a full game state sampled so that it
agrees with everything the bot's view shows, its hidden parts drawn at random. Each candidate action
at the root is an arm; playing an arm in world k means playing the action there and then a playout,
scored in [0, 1] from the bot's side.

Arms are compared on the same worlds (common random numbers): every arm's k-th playout runs in world
k with the same playout seed, so a difference between two arms is measured on identical deals, far
less noisily than on independent ones. The time goes to the arms by sequential halving (the
bandit of Gumbel MuZero, made for picking one best arm with few samples): all live arms play the next
world in turn; at the end of each of log2(arms) equal shares of the budget the worse half (by mean
over the same worlds) drops out, and an arm that trails the leader by more than three standard
errors of their paired difference drops out at once. The answer is the last arm standing, which is
the most visited one; when time runs out first, the best mean among the live (most visited) arms.
The search stops early once one arm is left, or when every live arm has scored the same in every
world so far (the choice does not matter).

The budget is wall-clock time from the moment the request reached the bot, ``TIME_SHARE`` of
``deadline_ms`` less ``SAFETY_MS`` for the network and JSON, checked between the steps of every
playout. With ``max_iterations`` instead, a search is reproducible: the answer then depends only on
the seed, never on the machine's speed.
"""

from __future__ import annotations

import math
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

TIME_SHARE = 0.5  # of deadline_ms: 420 ms of 1,000; at 0.6 one decision in 5,865 overran 1,000 ms in a tournament
# with two matches at once in the bot's one process (in isolation the same decision took 521 ms)
SAFETY_MS = 80.0  # network, JSON and the scheduler
MIN_SECONDS = 0.005
DROP_Z = 3.0  # standard errors of the paired difference that drop an arm before its phase ends
MIN_WORLDS = 6  # worlds every live arm plays before anything is dropped
SAME_WORLDS = 16  # identical scores in this many worlds: the choice does not matter
SWITCH_Z = 1.0  # standard errors of the paired difference another arm must lead the incumbent by (Pajarracos,
# seeds 13-112 of `bench.search_series --others rh`, odds from the scores: 0.597 at 2.0, 0.627 at 1.0, 0.603 at 0.5)


class OutOfTime(Exception):
    """Raised inside a playout when the budget is spent: that playout is dropped, the search ends."""


@dataclass
class Budget:
    """When to stop: a perf_counter deadline, or (reproducible) an iteration cap."""

    stop_at: float
    max_iterations: int | None = None
    started: float = field(default_factory=time.perf_counter)

    def left(self) -> float:
        return self.stop_at - time.perf_counter()

    def used(self, iterations: int) -> float:
        """Share of the budget spent so far."""
        if self.max_iterations is not None:
            return iterations / max(1, self.max_iterations)
        return (time.perf_counter() - self.started) / max(1e-6, self.stop_at - self.started)

    def expired(self, iterations: int = 0) -> bool:
        return self.used(iterations) >= 1.0

    def check(self) -> None:
        """Called between the steps of a playout: a long playout must not overrun the time budget
        (an iteration cap, being reproducible, never interrupts one)."""
        if self.max_iterations is None and time.perf_counter() >= self.stop_at:
            raise OutOfTime


def budget_for(request: dict[str, Any], started: float | None = None, share: float = TIME_SHARE,
               safety_ms: float = SAFETY_MS, max_iterations: int | None = None) -> Budget:
    """At most ``share`` of the request's ``deadline_ms`` less ``safety_ms``; the time bank is never used."""
    started = time.perf_counter() if started is None else started
    deadline_ms = float(request.get("deadline_ms") or 1000)
    seconds = max(MIN_SECONDS, (share * deadline_ms - safety_ms) / 1000)
    return Budget(started + seconds, max_iterations, started)


@dataclass
class SearchResult:
    rewards: list[list[float]]  # per arm, per world in order
    alive: list[int]
    iterations: int
    stopped_early: bool
    incumbent: int | None = None

    @property
    def visits(self) -> list[int]:
        return [len(r) for r in self.rewards]

    def best(self) -> int:
        """The live arm with the best mean over the worlds all live arms have played; then the
        earlier arm (the prior's order)."""
        common = min(len(self.rewards[a]) for a in self.alive)
        best = max(self.alive, key=lambda a: (sum(self.rewards[a][:common]), -a))
        if self.incumbent is None or best == self.incumbent:
            return best
        return best if _leads(self.rewards[best], self.rewards[self.incumbent], SWITCH_Z) else self.incumbent


Simulate = Callable[[int, int], float]


def halving_search(arms: int, simulate: Simulate, budget: Budget, incumbent: int | None = None) -> SearchResult:
    """Sequential halving over ``arms`` on common worlds: ``simulate(arm, k)`` plays the arm in
    world k and returns a reward in [0, 1].

    With an ``incumbent`` (the prior's own choice) that arm is never dropped and stays the answer
    unless the best arm leads it by ``SWITCH_Z`` standard errors of their paired difference: where
    playouts are few and noisy, a search that picks the best-looking of several arms mostly picks
    noise, and the prior's choice is the better bet."""
    rewards: list[list[float]] = [[] for _ in range(arms)]
    alive = list(range(arms))
    phases = max(1, math.ceil(math.log2(max(arms, 2))))
    phase = iterations = k = 0
    early = False
    try:
        while len(alive) > 1:
            for arm in alive:
                if budget.expired(iterations):
                    raise OutOfTime
                rewards[arm].append(simulate(arm, k))
                iterations += 1
            k += 1
            if k < MIN_WORLDS:
                continue
            alive = _drop_clear_losers(alive, rewards, incumbent)
            if k >= SAME_WORLDS and all(rewards[a] == rewards[alive[0]] for a in alive):
                early = True
                break
            if len(alive) > 1 and budget.used(iterations) >= (phase + 1) / phases:
                ranked = sorted(alive, key=lambda a: (-sum(rewards[a]), a))
                alive = sorted({*ranked[: math.ceil(len(alive) / 2)], *([incumbent] if incumbent in alive else [])})
                phase += 1
        early = early or not budget.expired(iterations)
    except OutOfTime:
        pass
    return SearchResult(rewards, alive, iterations, early, incumbent)


def _drop_clear_losers(alive: list[int], rewards: list[list[float]], incumbent: int | None = None) -> list[int]:
    """Arms that trail the leader by more than ``DROP_Z`` standard errors of the paired difference
    (never the incumbent)."""
    leader = max(alive, key=lambda a: (sum(rewards[a]), -a))
    return [arm for arm in alive if arm in (leader, incumbent) or not _leads(rewards[leader], rewards[arm], DROP_Z)]


def _leads(a: list[float], b: list[float], z: float) -> bool:
    """Arm a's mean beats arm b's by more than ``z`` standard errors of their paired difference, over
    the worlds both played."""
    common = min(len(a), len(b))
    if common < 2:
        return False
    diffs = [x - y for x, y in zip(a[:common], b[:common], strict=True)]
    mean, sd = statistics.fmean(diffs), statistics.pstdev(diffs)
    return mean > 0 and mean > z * sd / math.sqrt(common - 1)


class Worlds:
    """World k, sampled once and kept, and playout seed k: the same for every arm of one search."""

    def __init__(self, seed: int, sample: Callable[[random.Random], Any]) -> None:
        self.seed = seed
        self.sample = sample
        self.cache: list[Any] = []

    def get(self, k: int) -> Any:
        while len(self.cache) <= k:
            self.cache.append(self.sample(random.Random(self.seed * 1_000_003 + len(self.cache))))
        return self.cache[k]

    def playout_rng(self, k: int) -> random.Random:
        return random.Random((self.seed * 1_000_003 + k) * 7 + 1)
