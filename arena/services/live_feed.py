"""What spectators see while things happen: events for a match's page, a tournament's and a leaderboard's.

The secrecy rule (``publication``) decides what may go out. A match's board is shown live only while no
*other* match of its deal is queued or running: a twin still to be played would otherwise learn its own
deal (the same hands, reserve and barrels from another seat) from this match's board. While a twin is
open the feed says only that the match is being played: no turn, no clock, no step at all, so neither
the board nor the pace of the match (how many steps the deal took) can be read from it; it looks again
every ``RECHECK_S`` and shows the board from the moment the last twin is over. The board itself is the
engine's public view (``referee.live_view``): no hand, no seed, no result; the result and the replay
come with the published match. Tournament and leaderboard events carry no data at all, only "look
again": the pages read what they show through the same redacted queries as ever.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from arena.services.publication import OPEN, deal_of, deal_statuses
from arena.storage.db import Database
from arena.storage.models import Match
from referee.live_view import PublicStep, view_changes

log = logging.getLogger("arena.live")
RECHECK_S = 2.0  # how often a hidden board asks again whether its deal's twins are over


class LiveSink(Protocol):
    """Where events go (``arena.runtime.live_bus.LiveBus``; tests pass a list-backed fake)."""

    def publish(self, topic: str, kind: str, data: dict[str, Any], keep: bool = False) -> None:
        """Send the event to the topic's spectators; with ``keep``, also as what a newcomer is sent first."""

    def keep(self, topic: str, kind: str, data: dict[str, Any]) -> None:
        """Keep the event for newcomers without sending it to those watching."""


def match_topic(match_id: int) -> str:
    return f"match-{match_id}"


def tournament_topic(tournament_id: int) -> str:
    return f"tournament-{tournament_id}"


def ladder_topic(ladder_id: int) -> str:
    return f"ladder-{ladder_id}"


def leaderboard_topic(game: str, players: int) -> str:
    return f"leaderboard-{game}-{players}"


def board_may_show(session: Session, match_id: int) -> bool:
    """True when no other match of this match's deal is queued or running (see the module docstring)."""
    row = session.execute(select(Match.tournament_id, Match.ladder_id, Match.seed).where(Match.id == match_id)).first()
    if row is None:
        return False
    others = session.scalar(select(func.count()).select_from(Match)
                            .where(*deal_of(match_id, row.tournament_id, row.ladder_id, row.seed),
                                   Match.id != match_id, Match.status.in_(OPEN)))
    return not others


class MatchFeed:
    """The referee's ``on_public_step`` for one match: board events when the deal allows, else one
    "hidden" event. Never raises: a spectator feed must not break a match."""

    def __init__(self, sink: LiveSink, match_id: int, may_show: Callable[[], bool],
                 clock: Callable[[], float] = time.monotonic, wall: Callable[[], float] = time.time,
                 shown: bool | None = None) -> None:
        """``shown``: what ``may_show`` answers now, when the caller read it already (then the first step
        does not ask again)."""
        self.sink, self.match_id, self.may_show, self.clock, self.wall = sink, match_id, may_show, clock, wall
        self.known = shown
        self.topic = match_topic(match_id)
        self.showing = False
        self.checked_at: float | None = None
        self.view: dict[str, Any] | None = None
        self.turn = -1

    def __call__(self, step: PublicStep) -> None:
        try:
            self._on_step(step)
        except Exception:
            log.exception("live feed of match %s failed", self.match_id)

    def _on_step(self, step: PublicStep) -> None:
        if not self.showing:
            now = self.clock()
            if self.checked_at is not None and now - self.checked_at < RECHECK_S:
                return
            first = self.checked_at is None
            self.checked_at = now
            self.showing = self.may_show() if self.known is None else self.known
            self.known = None
            if not self.showing:
                if first:
                    self.sink.publish(self.topic, "hidden", {"match": self.match_id, "status": "running"}, keep=True)
                return
        # "at": when the step was applied (ms since the epoch), for the spectators' delay and running clocks
        board = {"match": self.match_id, **step.to_json(), "at": round(self.wall() * 1000)}
        if self.view is None or step.turn != self.turn + 1:
            self.sink.publish(self.topic, "board", board, keep=True)
        else:
            changes = view_changes(self.view, step.view)
            self.sink.publish(self.topic, "step", {**{k: v for k, v in board.items() if k != "view"},
                                                   "changes": changes})
            self.sink.keep(self.topic, "board", board)  # whole, for spectators who arrive now
        self.view, self.turn = step.view, step.turn


def match_feed(db: Database, sink: LiveSink | None, match_id: int, shown: bool | None = None) -> MatchFeed | None:
    """The feed ``run_match`` hands the referee; None without a sink (no Redis, tests). ``shown``: whether
    the board may show now, when the caller knows (``may_show_now``)."""
    if sink is None:
        return None

    def may_show() -> bool:
        with db.session(readonly=True) as session:
            return board_may_show(session, match_id)

    return MatchFeed(sink, match_id, may_show, shown=shown)


def announce(db: Database, sink: LiveSink | None, match_id: int) -> None:
    """After a match changed status (claimed, played, given up, cancelled): its status to its page, and to
    every match of its deal (published together with it, their pages now show the replay), and "look
    again" to its tournament's or ladder's page. Statuses only: a sealed match is said to be sealed, nothing more."""
    if sink is None:
        return
    try:
        with db.session(readonly=True) as session:
            row = session.execute(select(Match.tournament_id, Match.ladder_id, Match.seed)
                                  .where(Match.id == match_id)).first()
            if row is None:
                return
            deal = read_deal(session, match_id, row.tournament_id, row.ladder_id, row.seed)
        announce_deal(sink, deal)
    except Exception:
        log.exception("could not announce match %s", match_id)


@dataclass(frozen=True)
class Deal:
    """A match's deal as ``announce`` tells it: its tournament or ladder and its matches' statuses."""

    match_id: int
    tournament_id: int | None
    ladder_id: int | None
    statuses: list[tuple[int, str]]

    def may_show_now(self) -> bool:
        """``board_may_show`` from these statuses: no other match of the deal is open."""
        return not any(status in OPEN for other, status in self.statuses if other != self.match_id)


def read_deal(session: Session, match_id: int, tournament_id: int | None, ladder_id: int | None, seed: int) -> Deal:
    """The statuses ``announce_deal`` tells, read in the caller's transaction (one statement). A worker does
    not call it: its claim hands them back (``claims.claimed_deal``) and its record reads them with the deal."""
    return Deal(match_id, tournament_id, ladder_id, deal_statuses(session, match_id, tournament_id, ladder_id, seed))


def announce_deal(sink: LiveSink | None, deal: Deal | None) -> None:
    """``announce`` from statuses read already (publish after the transaction that read them commits)."""
    if sink is None or deal is None:
        return
    try:
        for other_id, status in deal.statuses:
            sink.publish(match_topic(other_id), "status", {"match": other_id, "status": str(status)}, keep=True)
        if deal.tournament_id is not None:
            sink.publish(tournament_topic(deal.tournament_id), "changed", {"tournament": deal.tournament_id},
                         keep=True)
        if deal.ladder_id is not None:  # ladder activity as it happens: its page counts and lists again
            sink.publish(ladder_topic(deal.ladder_id), "changed", {"ladder": deal.ladder_id}, keep=True)
    except Exception:
        log.exception("could not announce match %s", deal.match_id)


def refitted(sink: LiveSink | None, game: str, players: int) -> None:
    """A leaderboard was refitted: its page reads the new table."""
    if sink is not None:
        sink.publish(leaderboard_topic(game, players), "refitted", {"game": game, "players": players}, keep=True)
