"""The ladder's match planner: which tables to start next, chosen by what their results would teach.

Pure: the ratings come in (``Entrant``), tables come out; randomness only from the ``rng`` passed in, so a
tick is reproducible. The runtime (``arena.services`` ladder scheduler) calls ``choose_tables`` each tick
with the leaderboard's current fit and each bot's free capacity, and plays every table it gets in all of its
rotations (``arena.domain.schedules``' seat balance), each on a deal of its own unless the arena shares one
per table (``arena.services.ladder_tables``).

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
lately (``recent``), with a little multiplicative jitter from ``rng``. A bot's *need* is the sum of its pair
values over the pool: its expected rank error, weighted by what play would still change.

How tables are built (measured in ``bench/ladder.py sim``; docs/benchmarks.md has the figures and the
variants that lost):

1. Who plays: the bots being placed (``placing``) first, then the bots whose rank is most in doubt.
   Anchors are taken in that order, by need, largest first, each starting at most one table.
2. Whom they meet: a Thompson draw. Every bot's strength is drawn once per tick from N(estimate, sd); an
   anchor's opponents are the free bots whose draws lie nearest to its own, the distance measured in the
   pair's sd (so an overlapping, uncertain pair is near), each meeting lately costing ``RECENT_COST`` and
   (for a provisional anchor) another provisional bot costing ``NEWCOMER_COST``. While ratings are wide
   the draws are nearly random, so early tables are random tables:
   the long-range links that fix the whole order. As intervals narrow the tables close in on
   near-equal opponents, where a result teaches the most, yet stay varied. Always meeting the nearest
   bots is a trap: an oracle that seated every bot with its true neighbours needed 4 to 5 times random's
   matches for Kendall tau 0.9 (the comparisons form a chain, and the error of a long-range difference
   grows along it).
3. Which bots may anchor: on a board still settling, the *unsettled* ones (``unsettled_bots``: the one
   rule of ``arena.ratings.provisional``); settled bots play as opponents but rest otherwise. On a settled
   ladder (``was_settled``) with a newcomer, only the bots being placed anchor: the arena spends its matches
   on the newcomer's tables, not on re-opening the settled board. Once everything has settled every bot
   may anchor, and the tables are marked "maintenance" (the runtime plays them at its maintenance rate).

4. Who may sit together: never two bots of one owner (``Entrant.owner``). They could pool what each seat
   sees (one server behind both URLs sees two hands), gang up on the other seats or throw matches to each
   other, and a table of one owner's bots would farm rating. Bots served at one address count as one owner
   whoever submitted them (``seating_owners``). The arena's own bots (its organizers': owner None) may share
   tables, as the demo's graded bots do. An anchor with no table that keeps to this starts none this tick,
   and a ladder asks for no more tables than the rule lets its bots form (``table_room``).

``board_settled`` and ``ladder_settled`` say when no play would still move the table much: one definition
with the leaderboard's ``settled`` (``arena.ratings.provisional.is_settled``), with hysteresis for a ladder
that has settled. ``share_slots`` splits a global budget of tables in flight between ladders
(water-filling, see there).
"""

from __future__ import annotations

import math
import random
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar
from urllib.parse import urlsplit

import numpy as np

from arena.ratings.leaderboard import normal_los
from arena.ratings.provisional import TIE_WIDTH_ELO, is_settled, unresolved_pairs, unsettled_places

ELO_PER_LOGIT = 400.0 / math.log(10.0)
Z95 = 1.959963984540054
REOPEN_FACTOR = 1.25  # a settled ladder reopens only when a tie width grows 25 % past the settled one
MIN_SD_LOGIT = 0.01  # a bot without an interval still counts as a little uncertain
JITTER = 0.05  # relative noise on pair values: breaks ties, does not reorder clear choices
RECENT_COST = 0.5  # Thompson distance (in the pair's sd) one recent meeting of a pair costs
PLACING_SHARE = 0.5  # a bot with under half the median bot's matches is still being placed
NEWCOMER_COST = 1.0  # distance (in the pair's sd) another provisional bot costs a provisional anchor

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
    los_next: float | None = None  # the leaderboard's LOS over the next bot down; None: from the intervals
    owner: Hashable | None = None  # two bots of one owner never share a table; None: the arena's own bots


@dataclass(frozen=True)
class Table:
    """One table to play: rotation 0's seat order (the runtime plays its ``len(bot_ids)`` rotations)."""

    bot_ids: tuple[int, ...]
    reason: str  # human-readable why ("placement of X", "uncertain rank of X", "maintenance")


@dataclass(frozen=True)
class _Row:
    elo_low: float
    elo_high: float
    los_next: float | None
    bot_id: int


def _rows(entrants: Sequence[Entrant]) -> list[_Row]:
    """The entrants as leaderboard rows, best first; a missing LOS over the next comes from the intervals."""
    ordered = sorted(entrants, key=lambda e: (-e.elo, e.bot_id))
    rows = []
    for place, e in enumerate(ordered):
        los = e.los_next
        if los is None and place + 1 < len(ordered):
            nxt = ordered[place + 1]
            los = normal_los(e.elo - nxt.elo, _sd_elo(e) ** 2 + _sd_elo(nxt) ** 2)
        rows.append(_Row(e.elo_low, e.elo_high, los, e.bot_id))
    return rows


def _sd_elo(e: Entrant) -> float:
    return max((e.elo_high - e.elo_low) / (2 * Z95), MIN_SD_LOGIT * ELO_PER_LOGIT)


def tie_width(was_settled: bool) -> float:
    """Hysteresis: a ladder that has settled reopens only when a bot's interval passes ``REOPEN_FACTOR`` times
    the tie width, not when noise lifts one a little over it (play stops a bot exactly when it dips under)."""
    return TIE_WIDTH_ELO * (REOPEN_FACTOR if was_settled else 1.0)


def unsettled_bots(entrants: Sequence[Entrant], was_settled: bool = False) -> set[int]:
    """The bots whose rank is not resolved as far as the data allow (provisional, or in an adjacent pair
    neither told apart nor practically tied): ``arena.ratings.provisional``'s rule, the leaderboard's own."""
    rows = _rows(entrants)
    return {rows[i].bot_id for i in unsettled_places(rows, tie_width=tie_width(was_settled))}


def board_settled(entrants: Sequence[Entrant], was_settled: bool = False) -> bool:
    """Nothing left that play would resolve: exactly the leaderboard's ``settled`` (``is_settled``), with the
    wider tie width of ``tie_width(was_settled)`` once the ladder has settled. An empty board is not settled."""
    return is_settled(_rows(entrants), tie_width=tie_width(was_settled))


def ladder_settled(entrants: Sequence[Entrant], was_settled: bool) -> bool:
    """The ladder's settled state with hysteresis (what the runtime keeps as ``Ladder.settled_at``): it
    settles when ``board_settled`` first holds, and stays settled while the established bots stay resolved
    within ``tie_width(True)``. A bot being placed (``placing``) does not reopen the others: it gets its
    own tables (``choose_tables``), and a provisional one wakes the ladder's rate (``board_settled`` is
    false while it is provisional)."""
    if was_settled:
        new = placing(entrants)
        rows = _rows(entrants)
        return bool(entrants) and all(rows[i].bot_id in new or rows[i + 1].bot_id in new
                                      for i in unresolved_pairs(rows, tie_width=tie_width(True)))
    return board_settled(entrants)


def placing(entrants: Sequence[Entrant]) -> set[int]:
    """The bots still being placed: provisional, or newer than the board (fewer than ``PLACING_SHARE`` of
    the median bot's matches; a newcomer's interval can leave ``provisional`` long before its rank settles)."""
    if not entrants:
        return set()
    typical = float(np.median([e.matches for e in entrants]))
    return {e.bot_id for e in entrants if e.provisional or e.matches < PLACING_SHARE * typical}


def pair_key(a: int, b: int) -> tuple[int, int]:
    """The ``recent`` key of a pair: (low id, high id)."""
    return (a, b) if a < b else (b, a)


def pair_values(entrants: Sequence[Entrant], players: int) -> tuple[np.ndarray, np.ndarray]:
    """The value of one table's worth of play for every pair (module docstring), and each pair's
    information ``I``; both n x n with a zero diagonal."""
    elo = np.array([e.elo for e in entrants], dtype=float) / ELO_PER_LOGIT
    sd = np.array([_sd_elo(e) / ELO_PER_LOGIT for e in entrants])
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


def seating_owners(bots: Sequence[tuple[int, int | None, str]]) -> dict[int, Hashable | None]:
    """The owner each bot counts as at a table, from ``(bot id, owner id or None, URL)``: bots of one owner, and
    bots served at one address (scheme, host and port) whoever submitted them, are one owner, so they never
    share a table. A second account's bot at the same URL put one server behind two seats (a red-team review).
    None: the arena's own bots, which may share tables. Two accounts serving from two ports stay apart only by
    their account: the arena cannot see who runs a server."""
    parent: dict[Hashable, Hashable] = {}

    def root(node: Hashable) -> Hashable:
        while parent.setdefault(node, node) != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for _bot, owner, url in bots:
        if owner is not None:
            parent[root(("owner", owner))] = root(("server", _server(url)))
    return {bot: (None if owner is None else root(("owner", owner))) for bot, owner, _url in bots}


def _server(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{(parts.hostname or '').lower()}:{parts.port or ''}"


def table_room(entrants: Sequence[Entrant], players: int) -> int:
    """How many tables of ``players`` the entrants' free slots fill at once with no two bots of one owner at a
    table: the largest t with sum over owners of min(owner's free slots, t) >= players * t (the arena's own
    bots count one by one). What a ladder may ask for: counting free seats alone, a ladder of one owner's
    bots asked for tables it could never form and took the arena's spare room every tick."""
    free: dict[Hashable, int] = {}
    for e in entrants:
        unit = e.owner if e.owner is not None else ("bot", e.bot_id)
        free[unit] = free.get(unit, 0) + max(0, e.free_slots)
    t = sum(free.values()) // players if players > 0 else 0
    while t > 0 and sum(min(slots, t) for slots in free.values()) < players * t:
        t -= 1
    return t


def choose_tables(entrants: Sequence[Entrant], players: int, slots: int,
                  recent: Mapping[tuple[int, int], int], rng: random.Random,
                  was_settled: bool = False) -> list[Table]:
    """Up to ``slots`` tables (each uses one free slot of each of its bots), best first.

    ``was_settled``: the ladder has settled (``ladder_settled``'s hysteresis, the runtime's
    ``Ladder.settled_at``): noise does not reopen it, and a newcomer is placed without reopening the rest."""
    if players < 2:
        raise ValueError("a table needs at least two players")
    pool = sorted((e for e in entrants if e.free_slots > 0), key=lambda e: e.bot_id)
    if slots <= 0 or len(pool) < players:
        return []
    n = len(pool)
    gen = np.random.default_rng(rng.getrandbits(64))
    noise = gen.uniform(-JITTER, JITTER, size=(n, n))
    value, _info = pair_values(pool, players)
    value *= 1.0 + (noise + noise.T) / 2.0
    index = {e.bot_id: i for i, e in enumerate(pool)}
    met = np.zeros((n, n))
    for (a, b), times in recent.items():
        if times > 0 and a in index and b in index:
            met[index[a], index[b]] = met[index[b], index[a]] = times
    value /= (1.0 + met) ** 2
    need = value.sum(axis=1)
    sd = np.array([_sd_elo(e) / ELO_PER_LOGIT for e in pool])
    draw = np.array([e.elo / ELO_PER_LOGIT for e in pool]) + sd * gen.standard_normal(n)
    spread = np.sqrt(sd[:, None] ** 2 + sd[None, :] ** 2)  # a pair's sd: distances in it measure overlap
    provisional = np.array([e.provisional for e in pool])
    free = np.array([e.free_slots for e in pool])
    owner_of = [e.owner for e in pool]
    maintenance = board_settled(entrants, was_settled)
    new = placing(entrants)
    first = np.array([e.bot_id in new for e in pool])  # bots being placed anchor first, then by need
    if maintenance:
        may_anchor = np.ones(n, dtype=bool)
    elif was_settled and ladder_settled(entrants, True):
        may_anchor = first.copy()  # a newcomer on a settled ladder: its tables only
    else:
        unsettled = unsettled_bots(entrants, was_settled)
        may_anchor = np.array([e.bot_id in unsettled for e in pool])
    tables: list[Table] = []
    for anchor in sorted(np.flatnonzero(may_anchor), key=lambda i: (not first[i], -need[i])):
        if len(tables) >= slots or int((free > 0).sum()) < players:
            break
        if free[anchor] <= 0:
            continue
        seats = [int(anchor)]
        while len(seats) < players:
            cost = np.abs(draw - draw[anchor]) / spread[anchor] + RECENT_COST * met[seats].sum(axis=0)
            if provisional[anchor]:
                cost = cost + NEWCOMER_COST * provisional
            cost[free <= 0] = np.inf
            cost[seats] = np.inf
            seated = {owner_of[i] for i in seats} - {None}
            if seated:
                cost[[j for j in range(n) if owner_of[j] in seated]] = np.inf
            if not np.isfinite(cost).any():
                break  # every free bot left belongs to an owner already seated: no table for this anchor
            seats.append(int(np.argmin(cost)))
        if len(seats) < players:
            continue
        for i in seats:
            free[i] -= 1
        for x in seats:
            for y in seats:
                if x != y:
                    met[x, y] += 1  # met once more this tick
        reason = "maintenance" if maintenance else \
            f"{'placement' if provisional[anchor] else 'uncertain rank'} of {pool[anchor].bot_id}"
        rng.shuffle(seats)
        tables.append(Table(tuple(pool[i].bot_id for i in seats), reason))
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
