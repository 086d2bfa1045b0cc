"""Where a bot stands on its game's ladder, in one word and a reason: the one rule every page and the API
use (pure: it reads a bot's and its rating's attributes, whatever object carries them)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any


class LadderState(StrEnum):
    PLACING = "placing"  # on the ladder, rating still provisional (few matches, wide interval)
    ACTIVE = "active"  # on the ladder, rating settled
    PAUSED = "paused"  # off the ladder for now: by its owner, or on probation
    RETIRED = "retired"  # off the ladder for good (a newer version replaced it, or its owner retired it)


@dataclass(frozen=True)
class BotLadderState:
    state: LadderState
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"state": str(self.state), "reason": self.reason}


def _when(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC") if moment is not None else "soon"


def ladder_state(bot: Any, rating: Any | None, no_table: str | None = None) -> BotLadderState:
    """``bot``: ``retired_at``, ``paused_by`` ("owner" | "probation" | "new_secret" | None), ``paused_reason``,
    ``recheck_at``, ``status``; ``rating``: its leaderboard row (``provisional``, ``games``) or None;
    ``no_table``: why no ladder can seat it yet, if that is so."""
    if bot.retired_at is not None:
        return BotLadderState(LadderState.RETIRED,
                              f"retired on {_when(bot.retired_at)}: it keeps its page, matches and last rating")
    if bot.paused_by == "owner":
        return BotLadderState(LadderState.PAUSED, "paused by its owner" + (f": {bot.paused_reason}"
                                                                          if bot.paused_reason else ""))
    if bot.paused_by == "probation":
        why = bot.paused_reason or "it failed its health check"
        return BotLadderState(LadderState.PAUSED, f"on probation: {why}; to be re-checked at {_when(bot.recheck_at)}, "
                                                  "back on the ladder by itself once healthy")
    if bot.paused_by == "new_secret":
        at = bot.recheck_at.strftime("%Y-%m-%d %H:%M:%S UTC") if bot.recheck_at is not None else "soon"
        if bot.paused_reason:  # looked at once already: what it showed
            return BotLadderState(LadderState.PAUSED, f"waiting for its restart with the signing secret it was given: "
                                                      f"{bot.paused_reason}; looked at again at {at}")
        return BotLadderState(LadderState.PAUSED, "waiting for its owner to restart it with the signing secret it was "
                                                  f"given: checked and on the ladder from {at}, or at once when its "
                                                  "owner resumes it")
    if bot.status != "active":
        return BotLadderState(LadderState.PAUSED, "disabled by its owner")
    if rating is None:
        return BotLadderState(LadderState.PLACING, "waiting for its first rated match"
                              + (f": {no_table}" if no_table else ""))
    if rating.provisional:
        played = rating.games
        # not "placing: ...": the pages show the state beside the reason ("[placing] placing: 3 rated ...")
        return BotLadderState(LadderState.PLACING, f"{played} rated match{'es' if played != 1 else ''} so far, its "
                                                   "rating is still provisional")
    return BotLadderState(LadderState.ACTIVE, "on the ladder, its rating has settled")
