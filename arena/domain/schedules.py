"""Tournament schedules: which bots share a table, in which seat order, on which seed.

Two kinds of luck are cancelled by construction:

* Seat luck: every table is played in all k rotations (rotation r seats the table's bots starting from its
  r-th member), so every bot sits in every seat once per table it is at. Every design below puts every bot
  at the same number of tables, so over the schedule every bot holds every seat exactly equally often.
* Deal luck (duplicate play): the k rotations of a table share one seed, so the same deal is played from
  every seat. Different tables (and cycles) get different seeds: HMAC-SHA256 of the tournament seed and the
  table number under a key (the arena's deal secret), so a schedule is reproducible from the seed and the
  key together, and nobody without the key can compute a deal from the public seed (docs/reliability.md,
  "Hidden information"). An empty key (``arena tournament`` on your own machine) derives them from the
  seed alone.

Which tables: for k = 2 every pair (a round robin; the two rotations are the colour-swapped games). Otherwise
the fewest tables among the designs below in which every pair of bots meets equally often, counting only
designs of at most ``max_tables`` tables (default 70) or no more than the greedy design's:

* affine planes of AG(m, 2) when k = 4 and N = 2^m (the 4-sets of points with XOR 0; for N = 8 that is the
  resolvable 2-(8,4,3) design, 14 tables, every pair at 3 of them);
* lines of PG(m - 1, 2) when k = 3 and N = 2^m - 1 (the 3-sets {a, b, a XOR b} of labels 1..N; N = 7: Fano);
* a cyclic design: base blocks over Z_N and all their translates, chosen greedily to cover the differences
  evenly; used when that comes out exactly balanced (e.g. N = 13, k = 4: {0, 1, 3, 9});
* all k-subsets.

When none of these fits, the greedy cyclic design is used as it is: every pair meets at least once and
counts differ by little (e.g. 50 bots at 4 seats: 250 tables, every pair at 1 or 2), while seats stay
exactly balanced. The cap keeps schedules playable: AG(4, 2) for 16 bots would be 140 tables, all 4-subsets
of 9 bots 126; pass a larger ``max_tables`` to prefer exact balance anyway.
"""

from __future__ import annotations

import hashlib
import hmac
from collections import Counter
from collections.abc import Hashable, Sequence
from functools import reduce
from itertools import combinations
from math import comb
from operator import xor
from typing import NamedTuple

DEFAULT_MAX_TABLES = 70
SEED_SPACE = range(1, 2**63)


class ScheduledMatch(NamedTuple):
    """One match to play: its table (unique across cycles), rotation, shared seed, and bots in seat order."""

    table: int
    rotation: int
    seed: int
    bots: tuple[Hashable, ...]


def affine_planes(n: int) -> list[tuple[int, ...]]:
    """The 4-point planes of AG(m, 2) on points 0..n-1 (n = 2^m): 4-sets whose XOR is 0."""
    return [block for block in combinations(range(n), 4) if reduce(xor, block) == 0]


def fano_lines(n: int) -> list[tuple[int, ...]]:
    """The lines of PG(m - 1, 2) on labels 1..n (n = 2^m - 1), relabelled 0..n-1."""
    return [(a - 1, b - 1, (a ^ b) - 1) for a, b in combinations(range(1, n + 1), 2) if a < b < a ^ b]


def difference_class(d: int, n: int) -> int:
    d %= n
    return min(d, n - d)


def cyclic_design(n: int, k: int) -> tuple[list[tuple[int, ...]], bool]:
    """Greedy base blocks over Z_n until every difference is covered, their translates, and whether balanced.

    Bots x and x + d meet at as many tables as the base blocks hold ordered pairs with difference d, so the
    blocks are picked to spread the difference classes {d, n - d} evenly (d = n/2 counts twice: a block with
    b and b + n/2 meets that pair from both ends).
    """
    cover = dict.fromkeys(range(1, n // 2 + 1), 0)

    def load(x: int, block: list[int], pending: Counter[int]) -> int:
        """How covered the classes are that adding x to the block would hit (repeats within x count too)."""
        hits = Counter(difference_class(x - b, n) for b in block)
        return sum(times * (cover[c] + pending[c]) + times * (times - 1) // 2 for c, times in hits.items())

    blocks: list[list[int]] = []
    while min(cover.values()) < 1:
        block = [0]
        pending: Counter[int] = Counter()
        for _ in range(k - 1):
            best = min((x for x in range(1, n) if x not in block), key=lambda x: (load(x, block, pending), x))
            for b in block:
                pending[difference_class(best - b, n)] += 1
            block.append(best)
        for c, times in pending.items():
            cover[c] += times * (2 if 2 * c == n else 1)
        blocks.append(block)
    tables = [tuple(sorted((b + t) % n for b in block)) for block in blocks for t in range(n)]
    return tables, len(set(cover.values())) == 1


def design_tables(n: int, k: int, max_tables: int = DEFAULT_MAX_TABLES) -> list[tuple[int, ...]]:
    """Tables (k-sets of bot indices 0..n-1) meeting pairs as evenly as possible; see the module docstring."""
    if k < 2 or n < k:
        raise ValueError(f"cannot seat {n} bots at tables of {k}")
    if k == n:
        return [tuple(range(n))]
    if k == 2:
        return list(combinations(range(n), 2))
    cyclic, balanced = cyclic_design(n, k)
    limit = max(max_tables, len(cyclic))  # a balanced design may be larger than the greedy one, up to a point
    candidates = [cyclic] if balanced else []
    if k == 4 and n & (n - 1) == 0 and n * (n - 1) * (n - 2) // 24 <= limit:
        candidates.append(affine_planes(n))
    if k == 3 and (n + 1) & n == 0 and n * (n - 1) // 6 <= limit:
        candidates.append(fano_lines(n))
    if comb(n, k) <= limit:
        candidates.append(list(combinations(range(n), k)))
    return min(candidates, key=len) if candidates else cyclic


def table_seeds(seed: int, count: int, key: bytes = b"", context: str = "") -> list[int]:
    """``count`` distinct positive 63-bit seeds: table ``i`` gets HMAC-SHA256(key, "context|seed:i"), so
    they are reproducible from the tournament (``context``: its game, seats, bots...), its seed and the
    key, and unpredictable without the key. The same seed in another tournament gives other deals."""
    seeds: list[int] = []
    seen: set[int] = set()
    counter = 0
    while len(seeds) < count:
        digest = hmac.new(key, f"{context}|{seed}:{counter}".encode(), hashlib.sha256).digest()
        counter += 1
        value = int.from_bytes(digest[:8], "big") % (SEED_SPACE.stop - 1) + 1
        if value not in seen:  # a repeat (about 1 in 2^63 per pair) would make two tables one deal
            seen.add(value)
            seeds.append(value)
    return seeds


def round_robin(
    bots: Sequence[Hashable], seats: int, *, cycles: int = 1, seed: int = 0, max_tables: int = DEFAULT_MAX_TABLES,
    key: bytes = b"", context: str = "", duplicate: bool = True,
) -> list[ScheduledMatch]:
    """Every chosen table in all ``seats`` rotations, the whole design ``cycles`` times; a table's rotations
    share one seed (``duplicate``) or each gets its own (independent deals: nothing a bot sees in one
    match is part of another's deal). Seeds come from ``seed`` and the deal key (``table_seeds``)."""
    if len(set(bots)) != len(bots):
        raise ValueError("bots must be distinct")
    if cycles < 1:
        raise ValueError("cycles must be at least 1")
    tables = design_tables(len(bots), seats, max_tables)
    count = len(tables) * cycles
    seeds = table_seeds(seed, count * (1 if duplicate else seats), key, context)
    schedule = []
    for number in range(count):
        members = [bots[i] for i in tables[number % len(tables)]]
        for rotation in range(seats):
            order = tuple(members[rotation:] + members[:rotation])
            match_seed = seeds[number] if duplicate else seeds[number * seats + rotation]
            schedule.append(ScheduledMatch(number, rotation, match_seed, order))
    return schedule


def seat_counts(schedule: Sequence[ScheduledMatch]) -> dict[Hashable, list[int]]:
    """bot -> how often it holds each seat."""
    seats = max((len(match.bots) for match in schedule), default=0)
    counts: dict[Hashable, list[int]] = {}
    for match in schedule:
        for seat, bot in enumerate(match.bots):
            counts.setdefault(bot, [0] * seats)[seat] += 1
    return counts


def pair_counts(schedule: Sequence[ScheduledMatch]) -> Counter[frozenset]:
    """{a, b} -> how many scheduled matches seat both."""
    return Counter(frozenset(pair) for match in schedule for pair in combinations(match.bots, 2))
