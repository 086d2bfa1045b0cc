"""Ratings for the arena: batch Arena Elo with posterior intervals (prior fitted to the
board, deals as units), provisional marks, live incremental Elo, and SPRT math.

Pure computation: no I/O, no clock, no global state. See each module's docstring for the choices made.
"""

from __future__ import annotations

from arena.ratings.bradley_terry import DEFAULT_PRIOR_SD, ELO_PER_LOGIT, Tally, arena_elo, tally
from arena.ratings.leaderboard import LeaderboardRow, leaderboard
from arena.ratings.live import LiveElo, LiveRating
from arena.ratings.outcomes import ONE_LOSER, RANKED, MatchOutcome, Pair, pairs
from arena.ratings.provisional import is_provisional, is_settled, unresolved_pairs
from arena.ratings.sprt import Sprt, SprtStatus

__all__ = [
    "DEFAULT_PRIOR_SD",
    "ELO_PER_LOGIT",
    "ONE_LOSER",
    "RANKED",
    "LeaderboardRow",
    "LiveElo",
    "LiveRating",
    "MatchOutcome",
    "Pair",
    "Sprt",
    "SprtStatus",
    "Tally",
    "arena_elo",
    "is_provisional",
    "is_settled",
    "leaderboard",
    "pairs",
    "tally",
    "unresolved_pairs",
]
