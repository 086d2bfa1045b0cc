"""Make the queue agree with the database: the database is the truth about what is unfinished.

After a Redis restart (the queue is gone), a worker killed mid-match (its lease expires) or a lost
enqueue, every unfinished match of a running tournament, and every ladder match released to the workers
(``QUEUED``, or ``RUNNING`` with an expired lease: ahead of the queue), is queued again; a ladder match
still ``SCHEDULED`` waits for the ladder scheduler, which releases it when its bots have room. Enqueuing
twice is harmless: the claim on the match row lets only one worker play it. A cancelled tournament's match
left running by a dead worker is cancelled, so that its deal can be published.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import and_, func, or_, select, update
from sqlalchemy.orm import Session

from arena.runtime.queue import MatchQueue
from arena.services.leaderboards import stale_boards
from arena.services.publication import close_deal
from arena.services.tournaments import finish_tournament_if_done
from arena.storage.models import Match, MatchStatus, Tournament, TournamentStatus, utcnow


def reconcile(session: Session, queue: MatchQueue) -> dict[str, int]:
    now = utcnow()
    requeued, expired = _requeue_owed(session, queue, now, select(Match.id, Match.status)
                                      .join(Tournament, Tournament.id == Match.tournament_id)
                                      .where(Tournament.status == TournamentStatus.RUNNING))
    ladder = reconcile_ladders(session, queue, now)
    refits = 0
    for game, players in stale_boards(session):
        refits += queue.request_refit(game, players)
    abandoned = _cancel_abandoned(session, now)
    finished = 0
    for tournament_id in session.scalars(select(Tournament.id).where(Tournament.status == TournamentStatus.RUNNING)):
        finished += finish_tournament_if_done(session, tournament_id)
    return {"requeued": requeued, "expired_leases": expired, "tournaments_finished": finished,
            "refits_requested": refits, "abandoned_cancelled": abandoned, **ladder}


def reconcile_ladders(session: Session, queue: MatchQueue, now: datetime | None = None) -> dict[str, int]:
    """Ladder matches released to the workers that the queue lost (Redis restarted, the scheduler died
    between its commit and its enqueue) or whose worker died mid-match (lease expired): queued again.
    A paused ladder's are too: what is in flight is played."""
    now = now or utcnow()
    requeued, expired = _requeue_owed(session, queue, now,
                                      select(Match.id, Match.status).where(Match.ladder_id.is_not(None)))
    return {"ladder_requeued": requeued, "ladder_expired_leases": expired}


def _requeue_owed(session: Session, queue: MatchQueue, now: datetime, matches: Any) -> tuple[int, int]:
    """Enqueue again the ``matches`` (a select of id and status) that are queued but lost by the queue, or
    running on an expired lease; returns (requeued, expired leases)."""
    rows = session.execute(matches.where(or_(Match.status == MatchStatus.QUEUED,
                                             and_(Match.status == MatchStatus.RUNNING, Match.lease_until < now)))
                           .order_by(Match.id)).all()
    requeued = expired = 0
    live = queue.live([match_id for match_id, status in rows if status == MatchStatus.QUEUED], now.timestamp())
    for match_id, status in rows:
        if status == MatchStatus.RUNNING:
            # its worker is gone (RQ may still call the old job "started"): ahead of what waits, since it
            # has waited a lease already; at the back it waited for the whole queue too (9-15 s, not 4)
            queue.enqueue(match_id, at_front=True)
            expired += 1
        elif match_id not in live:
            queue.enqueue(match_id)
            requeued += 1
    return requeued, expired


def _cancel_abandoned(session: Session, now: datetime) -> int:
    """A cancelled tournament's match that nobody will play any more (its worker died, or a failed play
    put it back in the queue) is cancelled, so that its deal closes; and any deal left with sealed matches
    and none open is published (``publication``): no deal stays sealed for ever."""
    abandoned = or_(Match.status == MatchStatus.QUEUED,
                    and_(Match.status == MatchStatus.RUNNING, Match.lease_until < now))
    ids = session.scalars(
        select(Match.id).join(Tournament, Tournament.id == Match.tournament_id)
        .where(Tournament.status == TournamentStatus.CANCELLED, abandoned)
    ).all()
    cancelled = 0
    for match_id in ids:
        done = session.execute(update(Match).where(Match.id == match_id, abandoned)
                               .values(status=MatchStatus.CANCELLED, lease_until=None)
                               .execution_options(synchronize_session=False))
        if done.rowcount == 1:
            close_deal(session, match_id)
            cancelled += 1
    for match_id in session.scalars(select(func.min(Match.id)).where(Match.status == MatchStatus.SEALED)
                                    .group_by(Match.tournament_id, Match.ladder_id, Match.seed)).all():
        close_deal(session, match_id)  # publishes only a deal with no open match
    return cancelled
