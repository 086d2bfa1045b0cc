"""When a rating is provisional, and when a whole leaderboard has settled: both read from the intervals.

Provisional: the bot's 95 % Elo interval is wider than ``PROVISIONAL_WIDTH_ELO`` (300 Elo, i.e. +-150).
Not a game count: the interval already knows how informative the bot's matches were (their opponents,
the player count, draws, deals). Why 300: a new bot's interval is the prior's, about 4 prior sds (~750
Elo when strengths spread by 200 Elo); +-150 Elo is the point where its expected score against an equal
opponent is pinned between 30 % and 70 %, and in the simulations of ``bench.ratings`` it is reached after
about 15-25 matches (2-4 players), the first bucket where the table's ranks of such bots settle
(docs/ratings.md has the widths by matches played).

Settled board: every rank resolved as far as the data allow, i.e. no bot is provisional and every two
neighbours in the table are either told apart (likelihood of superiority at least ``SEPARATED_LOS``) or
known to be practically equal (both intervals at most ``TIE_WIDTH_ELO`` wide: more matches would only
resolve a difference of a few Elo, not worth the bots' time). A ladder can slow down on a settled board.

Pure functions over anything with ``elo_low``, ``elo_high`` (and ``los_next`` for the board), so both
``LeaderboardRow`` and the stored ``Rating`` rows can be passed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

PROVISIONAL_WIDTH_ELO = 300.0
TIE_WIDTH_ELO = 150.0
SEPARATED_LOS = 0.95


class RatedEntry(Protocol):
    """One line of a leaderboard as the board-level functions read it."""

    @property
    def elo_low(self) -> float: ...

    @property
    def elo_high(self) -> float: ...

    @property
    def los_next(self) -> float | None: ...


def is_provisional(elo_low: float, elo_high: float, *, max_width: float = PROVISIONAL_WIDTH_ELO) -> bool:
    """True while the 95 % Elo interval [elo_low, elo_high] is wider than ``max_width`` Elo."""
    return elo_high - elo_low > max_width


def unresolved_pairs(rows: Sequence[RatedEntry], *, separated: float = SEPARATED_LOS,
                     tie_width: float = TIE_WIDTH_ELO, skip_provisional: bool = False,
                     max_width: float = PROVISIONAL_WIDTH_ELO) -> list[int]:
    """Places i (0-based, rows best first) whose pair (i, i + 1) is neither told apart (LOS >= ``separated``
    either way) nor known to be practically equal (both intervals at most ``tie_width`` Elo wide).
    ``skip_provisional``: pairs with a provisional bot are left out (a ladder that has settled is not reopened
    by a newcomer; the newcomer itself is judged by ``is_provisional``)."""
    out = []
    for place in range(len(rows) - 1):
        upper, lower = rows[place], rows[place + 1]
        if skip_provisional and any(is_provisional(r.elo_low, r.elo_high, max_width=max_width)
                                    for r in (upper, lower)):
            continue
        los = upper.los_next
        apart = los is not None and (los >= separated or los <= 1.0 - separated)
        tied = max(upper.elo_high - upper.elo_low, lower.elo_high - lower.elo_low) <= tie_width
        if not (apart or tied):
            out.append(place)
    return out


def unsettled_places(rows: Sequence[RatedEntry], *, max_width: float = PROVISIONAL_WIDTH_ELO,
                     separated: float = SEPARATED_LOS, tie_width: float = TIE_WIDTH_ELO,
                     skip_provisional: bool = False) -> set[int]:
    """Places (0-based, rows best first) whose rank is not resolved as far as the data allow: a provisional
    bot (unless ``skip_provisional``), or either bot of an unresolved adjacent pair. Empty = settled: the one
    rule behind the leaderboard's ``settled`` and the ladder's (``arena.domain.ladder_planner``)."""
    out = set() if skip_provisional else {place for place, row in enumerate(rows)
                                          if is_provisional(row.elo_low, row.elo_high, max_width=max_width)}
    for place in unresolved_pairs(rows, separated=separated, tie_width=tie_width,
                                  skip_provisional=skip_provisional, max_width=max_width):
        out |= {place, place + 1}
    return out


def is_settled(rows: Sequence[RatedEntry], *, max_width: float = PROVISIONAL_WIDTH_ELO,
               separated: float = SEPARATED_LOS, tie_width: float = TIE_WIDTH_ELO) -> bool:
    """True when no bot is provisional and every rank is resolved as far as the data allow (rows best first,
    as the table and the stored ratings ordered by rank are). An empty board is not settled: it has no data."""
    return bool(rows) and not unsettled_places(rows, max_width=max_width, separated=separated, tie_width=tie_width)
