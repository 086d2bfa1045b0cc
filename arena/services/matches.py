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
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from sqlalchemy import Row, bindparam, select, update
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from arena.config import Settings
from arena.services import live_feed, tournaments
from arena.services.bots import address_guard
from arena.services.claims import ClaimAhead, claim, claim_ahead, claimed_deal, seat_specs, taken
from arena.services.leaderboards import board_lock_column, board_locked, refit
from arena.services.lease_renewals import RENEWALS
from arena.services.publication import DEAL_COLUMNS, close_deal, deal_query, settle_deal
from arena.services.redaction import redact_replay
from arena.storage.db import Database, core
from arena.storage.models import Bot, Match, MatchSeat, MatchStatus, TournamentStatus, utcnow
from arena.storage.read_together import read_together
from arena.storage.replays import compress, remember
from referee.connect_ahead import open_ahead
from referee.connection_keeper import ConnectionKeeper
from referee.errors import RulesError
from referee.fence import Fence, FenceCrossed
from referee.runner import play_match

log = logging.getLogger("arena.matches")
_MATCHES = Match.__table__
RefitRequest = Callable[[str, int], None]
ANNOUNCED = frozenset({"recorded"})  # outcomes run_match announced already (``live_feed.announce_deal``)
MAX_ATTEMPTS = 5  # a match whose plays keep failing (a crash, the job's time limit) is an error after this
GAVE_UP = f"the match failed {MAX_ATTEMPTS} times in a row and was given up"


class LeaseLost(Exception):
    """This worker can no longer be sure it holds the match: another may be playing it. Stop calling the
    bots and record nothing."""


def run_match(db: Database, settings: Settings, match_id: int, worker: str,
              request_refit: RefitRequest | None = None, live: live_feed.LiveSink | None = None,
              claimed_before: ClaimAhead | None = None, ahead: ClaimAhead | None = None,
              connections: ConnectionKeeper | None = None) -> str:
    """Claim, play and record one match; returns what happened ("recorded", "skipped", ...). A recorded
    match is announced to ``live`` here (``ANNOUNCED``), from the transaction that recorded it.

    Afterwards only this match's leaderboard is refitted: by a queued, coalesced refit job when
    ``request_refit`` is given (the worker passes the queue's), otherwise right here. ``live``: where its
    spectators' events go (``live_feed``: the public board, only while no twin of its deal is open).

    In a worker's batch: ``claimed_before``, this match's claim if the record of the match before it made it;
    ``ahead``, the next match, to be claimed by this match's record (``claims.ClaimAhead``); ``connections``, the
    batch's idle connections to bots, from the matches before this one (``referee.connection_keeper``), where
    the next match's are opened before this one is recorded (``referee.connect_ahead``)."""
    # No transaction: the claim is one atomic UPDATE, which also hands back the seats' bots and the deal's
    # statuses (for the live feed), as its subqueries read them (on PostgreSQL, from before the claim).
    def take() -> Row[Any] | None:
        with db.autocommit() as connection:
            return claim(connection, match_id, worker, settings.match_lease_s)

    made = claimed_before.take(match_id) if claimed_before is not None else None  # (by the record before it)
    if made is not None:
        claimed, claimed_at = made
    else:
        claimed_at = time.perf_counter()  # before the claim: the lease it takes ends no earlier than this + lease
        claimed = _once_more_if_lost(take)
    if claimed is None:
        return "skipped"
    attempt = claimed.attempts
    playable = attempt <= MAX_ATTEMPTS and claimed.tournament_status != TournamentStatus.CANCELLED
    if playable:
        try:
            bots = seat_specs(claimed)
            deal = None if live is None else claimed_deal(match_id, claimed)
        except BaseException:  # the claim stands on its own: free it for a retry at once
            _release(db, match_id, worker, attempt)
            raise
    if not playable:
        return _end_unplayed(db, match_id, worker, attempt, given_up=attempt > MAX_ATTEMPTS)
    # Each attempt is a new match to the bots: one that saw an earlier, cut-short attempt would
    # otherwise refuse the replayed turns as stale.
    referee_match_id = f"m{match_id}a{attempt}"
    game, seed, params, tc = (claimed.game, claimed.seed, dict(claimed.params),
                              settings.time_controls(claimed.time_limit_ms))
    log.info("match started", extra={"match_id": match_id, "game": game, "worker": worker})
    keeper = _LeaseKeeper(db, match_id, worker, attempt, settings.match_lease_s, claimed_at)
    guard = address_guard(settings)
    live_feed.announce_deal(live, deal)
    feed = live_feed.match_feed(db, live, match_id, shown=deal.may_show_now() if deal else None)
    try:
        with keeper:
            keeper.check()  # announcing may have waited on a cut link past the lease: no /start then
            replay = play_match(game, bots, seed, params, tc, match_id=referee_match_id,
                                guard=guard, on_step=keeper.on_step,
                                on_public_step=keeper.before_next_step(feed), fence=keeper.fence,
                                keeper=connections)
    except (LeaseLost, FenceCrossed) as exc:
        log.warning("match stopped: %s", exc, extra={"match_id": match_id, "game": game, "worker": worker})
        _release(db, match_id, worker, attempt)  # still ours after all (only unconfirmed): free it for a retry
        return "lost"
    except RulesError as exc:
        log.error("match cannot be set up: %s", exc, extra={"match_id": match_id})
        return "error" if _mark_error(db, match_id, str(exc), worker, attempt) else "duplicate"
    except BaseException:
        _release(db, match_id, worker, attempt)  # let a retry claim it at once
        raise
    if connections is not None and ahead is not None:  # the next match's bots accept while this one is recorded
        open_ahead(connections, ahead.urls, guard)
    recorded, published, deal = _once_more_if_lost(lambda: store(
        db, match_id, replay, claim=(worker, attempt), urls=[bot.url for bot in bots], read_deal=live is not None,
        bots=[bot.bot_id for bot in bots], ahead=ahead, known=claimed))
    live_feed.announce_deal(live, deal)
    log.info("match played" if recorded else "match recorded or claimed by another worker meanwhile",
             extra={"match_id": match_id, "game": game, "worker": worker})  # no result: it may be sealed
    if recorded and published:  # sealed: nothing new for the leaderboard yet
        players = len(bots)
        if request_refit is not None:
            request_refit(game, players)
        else:
            refit(db, game, players)
    return "recorded" if recorded else "duplicate"


def _once_more_if_lost(unit: Callable[[], Any]) -> Any:
    """A worker's claim or record, run once more on a new connection when its connection turned out lost (a
    server gone without a goodbye: its host crashed, a failover moved its address; the pool trusts a connection
    used less than a second ago without a round trip, ``db._alive_at_checkout``). Either may run twice: the
    claim takes only a match that is queued or whose lease ran out (a claim that went through but whose answer
    was lost leaves the match leased: skipped now, played again once the lease runs out), and the record
    stores only a match this claim still holds (one stored already is "duplicate")."""
    try:
        return unit()
    except DBAPIError as exc:
        if not exc.connection_invalidated:
            raise
        log.warning("the database connection was lost; once more on a new one: %s", exc)
        return unit()


class _LeaseKeeper:
    """Has the lease renewed every third of it while the match plays, from a thread (``lease_renewals``). Renewing only
    between steps let a bot that thought longer than the lease (a decision may take 60 s, the lease is
    30 s) have the match started again by another worker on the same deal, and then play the second
    attempt knowing what the first had shown it.

    Before each step (``on_step``) the match goes on only while the lease surely holds: the last renewal
    that reached the database, counted from before it was sent, is younger than the lease (less a tenth
    for clocks that differ between hosts). A worker cut off from the database mid-match therefore stops
    calling the bots before another worker can claim the match, instead of playing on, stale. And since a
    request written in time can still reach a bot late (held while the link is cut), the keeper keeps the
    referee's ``Fence`` at that same time: every call in flight is cut when it comes unconfirmed."""

    def __init__(self, db: Database, match_id: int, worker: str, attempt: int, lease_s: int,
                 claimed_at: float) -> None:
        self.db, self.match_id, self.worker, self.attempt, self.lease_s = db, match_id, worker, attempt, lease_s
        self.margin_s = lease_s / 10
        self.valid_until = claimed_at + lease_s - self.margin_s
        self.fence = Fence(self.valid_until)
        self.lost = False

    def __enter__(self) -> _LeaseKeeper:
        RENEWALS.add(self)  # renewed from the process's one thread (``lease_renewals``)
        return self

    def __exit__(self, *exc: object) -> None:
        RENEWALS.remove(self)
        self.fence.close()

    def renew(self) -> bool:
        """Extend the lease while this claim still holds it; False (and ``lost``) once it does not."""
        sent_at = time.perf_counter()
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
            self.fence.abort()
            return False
        self.valid_until = sent_at + self.lease_s - self.margin_s
        self.fence.move(self.valid_until)
        return True

    def check(self) -> None:
        if self.lost:
            raise LeaseLost(f"attempt {self.attempt} was claimed by another worker or finished")
        late = time.perf_counter() - self.valid_until
        if late > 0:
            unconfirmed = late + self.lease_s - self.margin_s
            raise LeaseLost(f"attempt {self.attempt} could not renew its lease for {unconfirmed:.1f} s")

    def on_step(self, _turn: int, _decisions: list[dict[str, Any]]) -> None:
        self.check()

    def before_next_step(self, feed: Callable[[Any], None] | None) -> Callable[[Any], None]:
        """The referee's public-step hook, called after ``/start`` and after each step, right before the
        next step's requests: the spectators' feed (which may wait on the database), then the lease check,
        so a worker held up there by a cut sends the bots nothing once its lease may have run out."""
        def hook(view: Any) -> None:
            if feed is not None:
                feed(view)
            self.check()

        return hook


def _end_unplayed(db: Database, match_id: int, worker: str, attempt: int, given_up: bool) -> str:
    """A claimed match not to be played: one that failed ``MAX_ATTEMPTS`` times is an error (so its deal can
    close), one of a cancelled tournament is cancelled (its twins' sealed results may wait for it alone).
    Only while this claim still holds it (the claim committed on its own, before this transaction)."""
    ours = (Match.id == match_id, Match.status == MatchStatus.RUNNING, Match.worker == worker,
            Match.attempts == attempt)
    with db.session() as session:
        if given_up:
            done = session.execute(update(Match).where(*ours)
                                   .values(status=MatchStatus.ERROR, error=GAVE_UP, finished_at=utcnow()))
        else:
            done = session.execute(update(Match).where(*ours).values(status=MatchStatus.CANCELLED))
        if done.rowcount != 1:
            return "skipped"  # taken by another worker meanwhile: it ends the match
        close_deal(session, match_id)  # (a cancelled match's twins' sealed results may wait for it alone)
        if given_up:
            _finish_tournament_if_done(session, match_id)
        return "error" if given_up else "cancelled"


def _mark_error(db: Database, match_id: int, message: str, worker: str, attempt: int) -> bool:
    """The match cannot be played: an error, only while this claim still holds it (else another worker took it
    over, and may have sealed it meanwhile: a sealed match changes only as its deal is published)."""
    with db.session() as session:
        done = session.execute(update(Match).where(Match.id == match_id, Match.status == MatchStatus.RUNNING,
                                                   Match.worker == worker, Match.attempts == attempt)
                               .values(status=MatchStatus.ERROR, error=message, finished_at=utcnow()))
        if done.rowcount != 1:
            return False
        close_deal(session, match_id)
        _finish_tournament_if_done(session, match_id)
        return True


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
    return store(db, match_id, replay, claim)[0]


def store(db: Database, match_id: int, replay: dict[str, Any], claim: tuple[str, int] | None = None,
          urls: list[str] | None = None, read_deal: bool = False, bots: list[int] | None = None,
          ahead: ClaimAhead | None = None, known: Any = None) -> tuple[bool, bool, live_feed.Deal | None]:
    """``record``, answering whether it recorded the match, whether it published it now and, with
    ``read_deal``, its deal's statuses as they are once recorded (for ``live_feed.announce_deal``, so a
    worker announces from this transaction, not one more). ``urls`` and ``bots``: the seats' bot URLs (to
    redact from the replay) and ids, in seat order, when the caller has them already. ``ahead``: the next match
    of the batch, claimed for ``claim``'s worker in the same transaction (``claims.claim_ahead``). ``known``: the
    match's ``DEAL_COLUMNS`` (a claim's row has them), so that its deal is read with the seal.

    The seal, the claim ahead and the deal's read go together (``read_together``: on PostgreSQL one round trip
    for the three and the transaction's BEGIN), in that order: the claim reads this match sealed, and the deal is
    read under the board's lock the seal took (its twins' records wait for it: no write skew)."""
    with db.session() as session:
        if urls is None:
            urls = list(session.scalars(select(Bot.url).join(MatchSeat, MatchSeat.bot_id == Bot.id)
                                        .where(MatchSeat.match_id == match_id).order_by(MatchSeat.seat)))
        redact_replay(replay, urls)
        blob = compress(replay)
        fresh = {match_id: replay}
        values = {"match_id": match_id, "result": replay["result"], "finished_at": utcnow(),
                  "steps": len(replay["steps"]), "replay_gz": blob}
        connection = core(session)
        locking = connection.dialect.name == "postgresql"
        statements = [(_SEAL[locking], values) if claim is None else
                      (_SEAL_CLAIMED[locking], {**values, "b_worker": claim[0], "b_attempt": claim[1]})]
        claimed_at = time.perf_counter()  # (before the claim ahead reads the clock: its lease ends after this + lease)
        if ahead is not None and claim is not None:
            statements.append(claim_ahead(ahead, claim[0]))
        if known is not None:
            statements.append(deal_query(locking, match_id, known, fresh))
        answers = read_together(connection, statements)
        row = answers[0][0] if answers[0] else None
        if row is None:
            session.rollback()
            return False, False, None
        if locking:
            board_locked(session, row.game, row.num_players)
        settled = settle_deal(session, match_id, fresh, known=row, bots=None if bots is None else {match_id: bots},
                              read=answers[-1] if known is not None else None)
        if match_id not in settled.published:  # sealed: its twin's publication may come here (``replays.recall``)
            remember(match_id, blob, replay)
        if row.tournament_id is not None and not settled.any_in((MatchStatus.QUEUED, MatchStatus.RUNNING)):
            # (a twin still open: not done; the count was read with the deal, under the board's lock)
            tournaments.finish_tournament_if_done(session, row.tournament_id, settled.tournament_open)
    if ahead is not None and claim is not None:  # (committed)
        taken(ahead, claim[0], answers[1][0] if answers[1] else None, claimed_at)
    deal = live_feed.Deal(match_id, row.tournament_id, row.ladder_id, settled.statuses) if read_deal else None
    return True, match_id in settled.published, deal


# Storing a played match: sealed, its replay and result in its row, while it is still unfinished (or still
# held by the claim that played it); the UPDATE hands back what ``settle_deal`` needs of it and, on PostgreSQL,
# takes its board's lock as it runs (``board_lock_column``: the round trip ``lock_board`` would make after it).
_SEALED = {"status": MatchStatus.SEALED, "result": bindparam("result"), "finished_at": bindparam("finished_at"),
           "lease_until": None, "steps": bindparam("steps"), "replay_gz": bindparam("replay_gz")}


def _sealing(*unfinished: Any) -> dict[bool, Any]:
    """The sealing UPDATE without (False) and with (True) the board's lock taken in it."""
    stmt = (update(_MATCHES).where(_MATCHES.c.id == bindparam("match_id"), *unfinished).values(**_SEALED)
            .returning(*(_MATCHES.c[column.key] for column in DEAL_COLUMNS)))
    return {False: stmt, True: stmt.returning(board_lock_column(_MATCHES.c.game, _MATCHES.c.num_players))}


_SEAL = _sealing(_MATCHES.c.status.in_([MatchStatus.RUNNING, MatchStatus.QUEUED]))
_SEAL_CLAIMED = _sealing(_MATCHES.c.status == MatchStatus.RUNNING, _MATCHES.c.worker == bindparam("b_worker"),
                         _MATCHES.c.attempts == bindparam("b_attempt"))


def _finish_tournament_if_done(session: Session, match_id: int) -> None:
    tournament_id = session.scalar(select(Match.tournament_id).where(Match.id == match_id))
    if tournament_id is not None:
        tournaments.finish_tournament_if_done(session, tournament_id)
