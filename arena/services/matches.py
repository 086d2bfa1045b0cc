"""Playing one stored match: claim it, play it through the referee, record it exactly once.

Exactly once: a worker claims the match row (queued, or running with an expired lease), keeps the lease
fresh from a thread while it plays, and stores result and replay in one transaction that only succeeds
while the row is still running under this worker's claim (its name and attempt), sealing the match until
its deal is over and publishing the deal when it is (``publication``). A job that runs twice, or a
worker killed mid-match, therefore never records a match twice and never loses one: the lease expires
and the match is played again. A worker cut off from the database (a network partition) stops calling
the bots once it can no longer be sure of its lease, and when it comes back it cannot overwrite the
match another worker played meanwhile.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from sqlalchemy import and_, or_, select, update
from sqlalchemy.orm import Session

from arena.config import Settings
from arena.services import live_feed, tournaments
from arena.services.bots import address_guard
from arena.services.leaderboards import refit
from arena.services.publication import close_deal
from arena.services.redaction import redact_replay
from arena.storage.db import Database
from arena.storage.models import Bot, Match, MatchSeat, MatchStatus, Tournament, TournamentStatus, utcnow
from arena.storage.replays import compress
from referee.errors import RulesError
from referee.runner import BotSpec, play_match

log = logging.getLogger("arena.matches")


def claim(session: Session, match_id: int, worker: str, lease_s: int) -> bool:
    """Take the match for this worker; False when it is finished, cancelled or leased to another."""
    now = utcnow()
    result = session.execute(
        update(Match)
        .where(Match.id == match_id,
               or_(Match.status == MatchStatus.QUEUED,
                   and_(Match.status == MatchStatus.RUNNING, Match.lease_until < now)))
        .values(status=MatchStatus.RUNNING, attempts=Match.attempts + 1, worker=worker,
                lease_until=now + timedelta(seconds=lease_s), started_at=now)
        .execution_options(synchronize_session=False)
    )
    return result.rowcount == 1


RefitRequest = Callable[[str, int], None]
MAX_ATTEMPTS = 5  # a match whose plays keep failing (a crash, the job's time limit) is an error after this
GAVE_UP = f"the match failed {MAX_ATTEMPTS} times in a row and was given up"


class LeaseLost(Exception):
    """This worker can no longer be sure it holds the match: another may be playing it. Stop calling the
    bots and record nothing."""


def run_match(db: Database, settings: Settings, match_id: int, worker: str,
              request_refit: RefitRequest | None = None, live: live_feed.LiveSink | None = None) -> str:
    """Claim, play and record one match; returns what happened ("recorded", "skipped", ...).

    Afterwards only this match's leaderboard is refitted: by a queued, coalesced refit job when
    ``request_refit`` is given (the worker passes the queue's), otherwise right here. ``live``: where its
    spectators' events go (``live_feed``: the public board, only while no twin of its deal is open)."""
    claimed_at = time.monotonic()  # before the claim: the lease it takes ends no earlier than this + lease
    with db.session() as session:
        if not claim(session, match_id, worker, settings.match_lease_s):
            return "skipped"
        match = session.get(Match, match_id)
        assert match is not None
        attempt = match.attempts
        if match.attempts > MAX_ATTEMPTS:  # it fails every time: give up, so its deal can close
            match.status, match.error, match.finished_at = MatchStatus.ERROR, GAVE_UP, utcnow()
            session.flush()
            close_deal(session, match_id)
            _finish_tournament_if_done(session, match_id)
            return "error"
        if _tournament_cancelled(session, match):
            match.status = MatchStatus.CANCELLED
            session.flush()
            close_deal(session, match_id)  # its twins' sealed results may wait for it alone
            return "cancelled"
        bots = _seat_specs(session, match)
        # Each attempt is a new match to the bots: one that saw an earlier, cut-short attempt would
        # otherwise refuse the replayed turns as stale.
        referee_match_id = f"m{match_id}a{match.attempts}"
        setup = (match.game, match.seed, dict(match.params), settings.time_controls(match.time_limit_ms))
    game, seed, params, tc = setup
    log.info("match started", extra={"match_id": match_id, "game": game, "worker": worker})
    keeper = _LeaseKeeper(db, match_id, worker, attempt, settings.match_lease_s, claimed_at)
    live_feed.announce(db, live, match_id)
    feed = live_feed.match_feed(db, live, match_id)
    try:
        with keeper:
            replay = play_match(game, bots, seed, params, tc, match_id=referee_match_id,
                                guard=address_guard(settings), on_step=keeper.on_step,
                                on_public_step=feed)
    except LeaseLost as exc:
        log.warning("match stopped: %s", exc, extra={"match_id": match_id, "game": game, "worker": worker})
        _release(db, match_id, worker, attempt)  # still ours after all (only unconfirmed): free it for a retry
        return "lost"
    except RulesError as exc:
        log.error("match cannot be set up: %s", exc, extra={"match_id": match_id})
        _mark_error(db, match_id, str(exc))
        return "error"
    except BaseException:
        _release(db, match_id, worker, attempt)  # let a retry claim it at once
        raise
    recorded = record(db, match_id, replay, claim=(worker, attempt))
    log.info("match played" if recorded else "match recorded or claimed by another worker meanwhile",
             extra={"match_id": match_id, "game": game, "worker": worker})  # no result: it may be sealed
    with db.session(readonly=True) as session:  # sealed: nothing new for the leaderboard yet
        published = session.scalar(select(Match.status).where(Match.id == match_id)) == MatchStatus.FINISHED
    if recorded and published:
        players = len(bots)
        if request_refit is not None:
            request_refit(game, players)
        else:
            refit(db, game, players)
    return "recorded" if recorded else "duplicate"


class _LeaseKeeper:
    """Renews the lease every third of it, from a thread of its own while the match plays. Renewing only
    between steps let a bot that thought longer than the lease (a decision may take 60 s, the lease is
    30 s) have the match started again by another worker on the same deal, and then play the second
    attempt knowing what the first had shown it.

    Before each step (``on_step``) the match goes on only while the lease surely holds: the last renewal
    that reached the database, counted from before it was sent, is younger than the lease (less a tenth
    for clocks that differ between hosts). A worker cut off from the database mid-match therefore stops
    calling the bots before another worker can claim the match, instead of playing on, stale."""

    def __init__(self, db: Database, match_id: int, worker: str, attempt: int, lease_s: int,
                 claimed_at: float) -> None:
        self.db, self.match_id, self.worker, self.attempt, self.lease_s = db, match_id, worker, attempt, lease_s
        self.margin_s = lease_s / 10
        self.valid_until = claimed_at + lease_s - self.margin_s
        self.lost = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"lease-{match_id}", daemon=True)

    def __enter__(self) -> _LeaseKeeper:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self.lost and not self._stop.wait(self.lease_s / 3):
            try:
                self.renew()
            except Exception as exc:  # the database away for a moment: the next beat tries again
                log.warning("could not renew the lease of match %s: %s", self.match_id, type(exc).__name__)

    def renew(self) -> bool:
        """Extend the lease while this claim still holds it; False (and ``lost``) once it does not."""
        sent_at = time.monotonic()
        with self.db.session() as session:
            done = session.execute(
                update(Match)
                .where(Match.id == self.match_id, Match.status == MatchStatus.RUNNING, Match.worker == self.worker,
                       Match.attempts == self.attempt)
                .values(lease_until=utcnow() + timedelta(seconds=self.lease_s))
                .execution_options(synchronize_session=False)
            )
        if done.rowcount != 1:
            self.lost = True
            return False
        self.valid_until = sent_at + self.lease_s - self.margin_s
        return True

    def check(self) -> None:
        if self.lost:
            raise LeaseLost(f"attempt {self.attempt} was claimed by another worker or finished")
        late = time.monotonic() - self.valid_until
        if late > 0:
            unconfirmed = late + self.lease_s - self.margin_s
            raise LeaseLost(f"attempt {self.attempt} could not renew its lease for {unconfirmed:.1f} s")

    def on_step(self, _turn: int, _decisions: list[dict[str, Any]]) -> None:
        self.check()


def _tournament_cancelled(session: Session, match: Match) -> bool:
    if match.tournament_id is None:
        return False
    status = session.scalar(select(Tournament.status).where(Tournament.id == match.tournament_id))
    return status == TournamentStatus.CANCELLED


def _seat_specs(session: Session, match: Match) -> list[BotSpec]:
    rows = session.execute(
        select(MatchSeat.seat, Bot).join(Bot, Bot.id == MatchSeat.bot_id)
        .where(MatchSeat.match_id == match.id).order_by(MatchSeat.seat)
    ).all()
    return [BotSpec(url=bot.url, secret=bot.secret, name=bot.name, bot_id=bot.id) for _seat, bot in rows]


def _mark_error(db: Database, match_id: int, message: str) -> None:
    with db.session() as session:
        session.execute(update(Match).where(Match.id == match_id).values(status=MatchStatus.ERROR, error=message,
                                                                         finished_at=utcnow()))
        close_deal(session, match_id)
        _finish_tournament_if_done(session, match_id)


def _release(db: Database, match_id: int, worker: str, attempt: int) -> None:
    try:
        with db.session() as session:
            session.execute(update(Match).where(Match.id == match_id, Match.worker == worker,
                                                Match.attempts == attempt, Match.status == MatchStatus.RUNNING)
                            .values(status=MatchStatus.QUEUED, lease_until=None))
    except Exception:
        log.exception("could not release match %s", match_id)


def record(db: Database, match_id: int, replay: dict[str, Any], claim: tuple[str, int] | None = None) -> bool:
    """Store the played match in one transaction, only if nobody recorded it first: sealed while another
    match of its deal is open, and then published with every sealed twin once none is (``publication``).

    ``claim`` (worker, attempt) is the claim that played it: the match is then recorded only while that
    claim still holds it. Without it, a worker whose lease ran out while it was cut off could come back
    and overwrite the match another worker had claimed again and was playing."""
    unfinished = Match.status.in_([MatchStatus.RUNNING, MatchStatus.QUEUED])
    if claim is not None:
        unfinished = and_(Match.status == MatchStatus.RUNNING, Match.worker == claim[0], Match.attempts == claim[1])
    with db.session() as session:
        redact_replay(replay, list(session.scalars(select(Bot.url).join(MatchSeat, MatchSeat.bot_id == Bot.id)
                                                   .where(MatchSeat.match_id == match_id))))
        done = session.execute(
            update(Match)
            .where(Match.id == match_id, unfinished)
            .values(status=MatchStatus.SEALED, result=replay["result"], finished_at=utcnow(), lease_until=None,
                    steps=len(replay["steps"]), replay_gz=compress(replay))
            .execution_options(synchronize_session=False)
        )
        if done.rowcount != 1:
            session.rollback()
            return False
        close_deal(session, match_id, {match_id: replay})
        _finish_tournament_if_done(session, match_id)
    return True


def _finish_tournament_if_done(session: Session, match_id: int) -> None:
    tournament_id = session.scalar(select(Match.tournament_id).where(Match.id == match_id))
    if tournament_id is not None:
        tournaments.finish_tournament_if_done(session, tournament_id)
