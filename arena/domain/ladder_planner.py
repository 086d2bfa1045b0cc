"""The ladder's match planner: which tables to start next, chosen by what their results would teach.

Pure: the ratings come in (``Entrant``), tables come out; randomness only from the ``rng`` passed in, so a
tick is reproducible. The runtime (``arena.services`` ladder scheduler) calls ``choose_tables`` each tick
with the leaderboard's current fit and each bot's free capacity, and plays every table it gets in all of its
rotations on one deal (``arena.domain.schedules``' seat and deal balance).

What a table is worth. Ratings are on the Bradley-Terry logit scale (Elo / ``ELO_PER_LOGIT``); a bot's
standard deviation ``sd`` is its 95 % interval width / 3.92. For a pair (i, j) with fitted difference ``d``
and pair variance ``s2 = sd_i^2 + sd_j^2``:

* ``unsure = Phi(-|d| / sqrt(s2))``: how likely the leaderboard has the pair in the wrong order (0.5 for a
  coin flip, near 0 for a resolved pair). Summed over j it is the bot's expected rank error, so tables that
  maximise it attack rank uncertainty where it is largest;
* ``learn = I s2 / (1 + I s2)`` with ``I = p (1 - p) k / (k - 1)``, the Fisher information one table (k
  rotations, each pair weighing 1 / (k - 1)) gives about the difference: the share of the pair's variance
  one table would remove. Pairs already pinned down (small ``s2``) or hopelessly mismatched (p near 0 or 1)
  are worth little.

A pair's value is ``unsure * learn``, divided by ``(1 + met)^2`` where ``met`` counts how often the pair met
lately (``recent``, plus tables chosen earlier in the same tick), so the same few pairs do not meet over and
over; a little multiplicative jitter from ``rng`` breaks ties without favouring low ids. A table is worth
the sum of its pairs' values.

How tables are built, greedily, best first, each taking one free slot of each of its bots:

1. Placement: while a provisional bot with a free slot remains, the one with the fewest matches anchors the
   next table; its opponents are added one by one, each the bot adding the most value to the table, where
   an opponent's pair with the anchor also counts how well that opponent is known (``1 / (1 + I sd^2)``):
   a new bot is placed against bots near its estimate whose own ratings are reliable, not against the other
   newcomers.
2. Otherwise the bot whose rank is most in doubt (the largest sum of its pair values over the bots with a
   free slot: its expected rank error, weighted by what play would still change) anchors the next table,
   filled the same way. Until the whole board has settled only unsettled bots (``board_settled`` of the bot
   alone is false) anchor: settled bots play as their opponents but rest otherwise, instead of burning bot
   time on tables that would change nothing; once everything has settled, every bot may anchor again and
   the tables are marked "maintenance" (the runtime plays them at its maintenance rate).

``board_settled`` says when no play would still move the table much (no provisional bot, every interval
narrow or its rank resolved): the runtime then slows to a maintenance rate. ``share_slots`` splits a global
budget of tables in flight between ladders (water-filling, see there).
"""

from __future__ import annotations

import math
import random
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

ELO_PER_LOGIT = 400.0 / math.log(10.0)
Z95 = 1.959963984540054
SETTLED_ELO_WIDTH = 150.0  # every interval at most this wide (or its rank resolved): the board has settled
REOPEN_FACTOR = 1.25  # a settled board reopens for a bot whose interval grew 25 % past the settled width
MIN_SD_LOGIT = 0.01  # a bot without an interval (no resamples) still counts as a little uncertain
JITTER = 0.05  # relative noise on pair values: breaks ties, does not reorder clear choices

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class Entrant:
    """One bot of a ladder as the planner sees it: its current fit and how many more matches it may start."""

    bot_id: int
    elo: float  # current fitted estimate (1500 prior for a bot never rated)
    elo_low: float  # 95 % interval
    elo_high: float
    rank_low: int  # 95 % rank range (1 = best); for an unrated bot 1..n
    rank_high: int
    matches: int  # rated matches played on this board
    provisional: bool
    free_slots: int  # how many more matches it may start now (capacity minus in flight, >= 0)


@dataclass(frozen=True)
class Table:
    """One table to play: rotation 0's seat order (the runtime plays ``len(bot_ids)`` rotations on one deal)."""

    bot_ids: tuple[int, ...]
    reason: str  # human-readable why ("placement of X", "uncertain rank of X", "maintenance")


def board_settled(entrants: Sequence[Entrant], elo_width: float | None = None) -> bool:
    """Nothing left that play would resolve soon: no provisional bot and every bot's interval at most
    ``elo_width`` (default ``SETTLED_ELO_WIDTH``) wide or its rank resolved (one possible rank)."""
    elo_width = SETTLED_ELO_WIDTH if elo_width is None else elo_width
    return all(not e.provisional and (e.elo_high - e.elo_low <= elo_width or e.rank_low == e.rank_high)
               for e in entrants)


def settled_width(was_settled: bool) -> float:
    """Hysteresis: a board that has settled reopens only when a bot's interval passes ``REOPEN_FACTOR`` times
    the settled width (or a bot is provisional), not when bootstrap noise lifts one a little over it: the
    planner stops a bot's play exactly when it dips under the width, so many bots sit just below it."""
    return SETTLED_ELO_WIDTH * (REOPEN_FACTOR if was_settled else 1.0)


def ladder_settled(entrants: Sequence[Entrant], was_settled: bool) -> bool:
    """The ladder's settled state with hysteresis (what the runtime keeps as ``Ladder.settled_at``): it
    settles when ``board_settled`` first holds, and stays settled while every established bot's interval
    stays within ``settled_width(True)``; a provisional newcomer does not reopen the others (it is placed on
    its own, and wakes the ladder's rate: ``board_settled`` is false while it is provisional)."""
    if was_settled:
        width = settled_width(True)
        return all(e.provisional or board_settled([e], width) for e in entrants)
    return bool(entrants) and board_settled(entrants)


def pair_key(a: int, b: int) -> tuple[int, int]:
    """The ``recent`` key of a pair: (low id, high id)."""
    return (a, b) if a < b else (b, a)


def pair_values(entrants: Sequence[Entrant], players: int) -> tuple[np.ndarray, np.ndarray]:
    """The value of one table's worth of play for every pair (module docstring), and each pair's
    information ``I`` (for the placement weight); both n x n with a zero diagonal."""
    elo = np.array([e.elo for e in entrants], dtype=float) / ELO_PER_LOGIT
    sd = np.array([max((e.elo_high - e.elo_low) / (2 * Z95) / ELO_PER_LOGIT, MIN_SD_LOGIT) for e in entrants])
    d = np.abs(elo[:, None] - elo[None, :])
    s2 = sd[:, None] ** 2 + sd[None, :] ** 2
    p = 1.0 / (1.0 + np.exp(-d))
    info = p * (1.0 - p) * players / (players - 1)
    unsure = 0.5 * _erfc(d / np.sqrt(2.0 * s2))
    value = unsure * info * s2 / (1.0 + info * s2)
    np.fill_diagonal(value, 0.0)
    np.fill_diagonal(info, 0.0)
    return value, info


def _erfc(x: np.ndarray) -> np.ndarray:
    """Complementary error function on an array (numpy has none; math.erfc element-wise is exact)."""
    return np.vectorize(math.erfc, otypes=[float])(x)


def choose_tables(entrants: Sequence[Entrant], players: int, slots: int,
                  recent: Mapping[tuple[int, int], int], rng: random.Random,
                  settled_width: float | None = None) -> list[Table]:
    """Up to ``slots`` tables (each uses one free slot of each of its bots), best first.

    ``settled_width``: the interval width under which a bot counts as settled (default
    ``SETTLED_ELO_WIDTH``); pass ``settled_width(was_settled)`` so a board that has settled does not
    reopen over bootstrap noise."""
    if players < 2:
        raise ValueError("a table needs at least two players")
    pool = sorted((e for e in entrants if e.free_slots > 0), key=lambda e: e.bot_id)
    if slots <= 0 or len(pool) < players:
        return []
    n = len(pool)
    gen = np.random.default_rng(rng.getrandbits(64))
    noise = gen.uniform(-JITTER, JITTER, size=(n, n))
    value, info = pair_values(pool, players)
    value *= 1.0 + (noise + noise.T) / 2.0
    index = {e.bot_id: i for i, e in enumerate(pool)}
    for (a, b), met in recent.items():
        if met > 0 and a in index and b in index:
            value[index[a], index[b]] /= (1.0 + met) ** 2
            value[index[b], index[a]] = value[index[a], index[b]]
    sd2 = np.array([max((e.elo_high - e.elo_low) / (2 * Z95) / ELO_PER_LOGIT, MIN_SD_LOGIT) ** 2 for e in pool])
    free = np.array([e.free_slots for e in pool])
    maintenance = board_settled(entrants, settled_width)
    unsettled = np.array([not board_settled([e], settled_width) for e in pool])
    placing = sorted((i for i, e in enumerate(pool) if e.provisional), key=lambda i: (pool[i].matches, rng.random()))
    tables: list[Table] = []
    while len(tables) < slots and int((free > 0).sum()) >= players:
        anchor = next((i for i in placing if free[i] > 0), None)
        if anchor is not None:
            placing.remove(anchor)
            seats = [anchor]
            reason = f"placement of {pool[anchor].bot_id}"
            # an opponent's pair with the newcomer counts as much as the opponent's own rating is known
            known = 1.0 / (1.0 + info[anchor] * sd2)
            first_gain = value[anchor] * known
        else:
            # the bot whose rank is most in doubt: the most value summed over the bots it could meet
            live = (free > 0) & (unsettled | maintenance)
            if not live.any():
                break  # the rest of the board has settled: its bots rest until maintenance
            need = np.where(live, (value * (free > 0)[None, :]).sum(axis=1), -1.0)
            anchor = int(np.argmax(need))
            seats = [anchor]
            reason = f"uncertain rank of {pool[anchor].bot_id}"
            first_gain = value[anchor].copy()
        gain = first_gain.copy()
        while len(seats) < players:
            candidates = np.where(free > 0, gain, -np.inf)
            candidates[seats] = -np.inf
            pick = int(np.argmax(candidates))
            seats.append(pick)
            gain += value[pick]
        for i in seats:
            free[i] -= 1
        for x in range(len(seats)):
            for y in range(x + 1, len(seats)):
                a, b = seats[x], seats[y]
                value[a, b] /= 4.0  # met once more this tick: (1 + met)^2 grows by at least 4x from 0
                value[b, a] = value[a, b]
        rng.shuffle(seats)
        tables.append(Table(tuple(pool[i].bot_id for i in seats), "maintenance" if maintenance else reason))
    return tables


def share_slots(demand: Mapping[K, int], budget: int, played: Mapping[K, float] | None = None,
                weights: Mapping[K, float] | None = None) -> dict[K, int]:
    """Split ``budget`` tables in flight between ladders: max-min fair (water-filling) by weight.

    Each ladder asks for ``demand`` tables (what it could start now: e.g. its free bots / players, or fewer
    when settled). Every ladder gets ``min(demand, its fair share)``; what a satisfied ladder leaves is shared
    among the others, in proportion to ``weights`` (default 1 each). Whole tables left over go, one each, to
    the ladders that have ``played`` least lately (matches per weight), ties by key order, so over many ticks
    equal ladders get equal matches even when the budget does not divide evenly."""
    played = played or {}
    weights = weights or {}
    share = dict.fromkeys(demand, 0)
    budget = max(budget, 0)
    open_ = {k for k, want in demand.items() if want > 0}
    while budget > 0 and open_:
        total = sum(weights.get(k, 1.0) for k in open_)
        quota = {k: budget * weights.get(k, 1.0) / total for k in open_}
        whole = {k: min(math.floor(quota[k]), demand[k] - share[k]) for k in open_}
        if not any(whole.values()):
            order = sorted(open_, key=lambda k: ((played.get(k, 0.0) + share[k]) / weights.get(k, 1.0), str(k)))
            for k in order[:budget]:
                share[k] += 1
            budget -= min(budget, len(order))
        else:
            for k, units in whole.items():
                share[k] += units
                budget -= units
        open_ = {k for k in open_ if share[k] < demand[k]}
    return share
