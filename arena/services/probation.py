"""Probation (Battlesnake's sweeps, Halite's disabling): a bot that fails its health check, or whose
recent ladder matches fault too often, is paused from the ladder with the reason in words, re-checked on
an exponential back-off by ``strikes``, and resumed by itself once healthy.

The ladder scheduler calls ``review`` after it publishes matches and ``recheck_due`` on its tick (a
health check takes seconds: call it where a slow call does not hold the tick, e.g. its own job). The same
re-checks end the wait of a bot just given a signing secret (``bots.hold_for_new_secret``).
An owner's pause is never touched here: only the owner resumes it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from arena.config import Settings
from arena.services import bot_events
from arena.services.bot_events import BotEventKind, aware
from arena.services.bots import HealthCheck, default_health_check
from arena.services.redaction import without_addresses
from arena.storage.db import Database
from arena.storage.models import Bot, BotStatus, Fault, Match, MatchSeat, MatchStatus, PausedBy, utcnow

MAX_REASON = 600


@dataclass(frozen=True)
class Paused:
    """A bot ``review`` or a failed health check put on probation."""

    bot_id: int
    reason: str
    strikes: int
    recheck_at: datetime


@dataclass(frozen=True)
class Recheck:
    """One re-check by ``recheck_due``: resumed, or still paused until ``recheck_at``."""

    bot_id: int
    resumed: bool
    problems: list[str] = field(default_factory=list)
    recheck_at: datetime | None = None
    new_secret: bool = False  # it waited for its restart with a new secret (not on probation)

    @property
    def not_restarted(self) -> bool:
        """It waits on for its restart with its secret: no strike, looked at again and again."""
        return self.new_secret and not self.resumed and self.problems == [NOT_RESTARTED]

    def line(self, name: str | None = None) -> str:
        """What the scheduler's terminal says of it (``name``: the bot's, else its id)."""
        bot = f"bot {name if name is not None else self.bot_id}"
        if self.resumed:
            return f"{bot} " + ("restarted with its secret: on the ladder" if self.new_secret
                            else "passed its re-check: back on the ladder")
        at = f"{self.recheck_at:%H:%M:%S} UTC" if self.recheck_at is not None else "soon"
        if self.not_restarted:
            return (f"{bot} still answers unsigned requests: not restarted with its secret yet (no strike); "
                    f"looked at again at {at}")
        if self.new_secret:
            return f"{bot} failed its check after it was given its secret: on probation; next at {at}"
        return f"{bot} failed its re-check; next at {at}"


def backoff(strikes: int, settings: Settings) -> timedelta:
    """60 s, 120 s, 240 s, ... (``ARENA_LADDER_RECHECK_S`` doubled per strike), at most ``_RECHECK_MAX_S``."""
    seconds = settings.ladder_recheck_s * 2 ** min(max(strikes - 1, 0), 30)
    return timedelta(seconds=min(seconds, settings.ladder_recheck_max_s))


def on_ladder(bot: Bot) -> bool:
    return bot.retired_at is None and bot.paused_by is None and bot.status == BotStatus.ACTIVE


def put_on_probation(session: Session, bot: Bot, reason: str, settings: Settings,
                     now: datetime | None = None) -> Paused | None:
    """Pause ``bot`` for ``reason`` with one more strike; None when it is retired or its owner paused it."""
    if bot.retired_at is not None or bot.paused_by == PausedBy.OWNER:
        return None
    now = now or utcnow()
    bot.strikes = (bot.strikes or 0) + 1
    bot.paused_by, bot.paused_reason = PausedBy.PROBATION, reason[:MAX_REASON]
    bot.recheck_at = now + backoff(bot.strikes, settings)
    bot_events.record(session, bot, BotEventKind.PROBATION, now, reason=bot.paused_reason, strikes=bot.strikes,
                      recheck_at=bot.recheck_at.isoformat())
    session.flush()
    return Paused(bot.id, bot.paused_reason, bot.strikes, bot.recheck_at)


def failed_health_check(session: Session, bot_id: int, problems: list[str], settings: Settings,
                        now: datetime | None = None) -> Paused | None:
    """For a caller that health-checked a bot on the ladder and saw it fail."""
    bot = session.get(Bot, bot_id)
    if bot is None or not on_ladder(bot):
        return None
    return put_on_probation(session, bot, health_reason(problems, bot.url), settings, now)


def health_reason(problems: list[str], url: str) -> str:
    """The public paused reason: the first problem with the bot's address blanked (the guard's refusal
    names the address its host resolved to and the port; a bot's URL is its owner's)."""
    first = problems[0] if problems else "no answer"
    more = f" (and {len(problems) - 1} more problem{'s' if len(problems) > 2 else ''})" if len(problems) > 1 else ""
    return without_addresses(f"its health check failed: {first}{more}", [url])


def fault_reason(session: Session, bot_id: int, faulty: list[int], window: int) -> str:
    """"4 of its last 6 ladder matches had faults (timeout at /act ×5, connection_error at /start ×1)"."""
    kinds = Counter(session.execute(select(Fault.kind, Fault.path).where(Fault.bot_id == bot_id,
                                                                         Fault.match_id.in_(faulty))).all())
    listed = ", ".join(f"{kind} at {path} ×{count}" for (kind, path), count in kinds.most_common(3))
    return (f"{len(faulty)} of its last {window} ladder matches had faults or forfeits"
            + (f" ({listed})" if listed else ""))


def _recent_ladder_seats(session: Session, bot_id: int, since: datetime | None, limit: int) -> list[tuple[int, bool]]:
    """(match id, went wrong) for the bot's newest published ladder matches since ``since``."""
    query = (select(MatchSeat.match_id, MatchSeat.faults, MatchSeat.forfeited)
             .join(Match, Match.id == MatchSeat.match_id)
             .where(MatchSeat.bot_id == bot_id, Match.ladder_id.is_not(None), Match.status == MatchStatus.FINISHED))
    if since is not None:
        query = query.where(Match.finished_at > since)
    rows = session.execute(query.order_by(MatchSeat.match_id.desc()).limit(limit)).all()
    return [(row.match_id, bool(row.forfeited or row.faults)) for row in rows]


def review(session: Session, bot_ids: Iterable[int], settings: Settings, now: datetime | None = None) -> list[Paused]:
    """Judge each bot on the ladder by its latest ``ARENA_LADDER_FAULT_WINDOW`` published ladder matches
    since it last came back; pause those whose share of matches with faults reaches
    ``ARENA_LADDER_FAULT_RATE`` (once they have ``_FAULT_MIN_MATCHES``). Call it in the unit of work that
    published the matches, or right after."""
    paused = []
    for bot_id in sorted(set(bot_ids)):
        bot = session.get(Bot, bot_id)
        if bot is None or not on_ladder(bot):
            continue
        seats = _recent_ladder_seats(session, bot_id, bot_events.last_resumed_at(session, bot_id),
                                     settings.ladder_fault_window)
        faulty = [match_id for match_id, wrong in seats if wrong]
        if len(seats) < settings.ladder_fault_min_matches or len(faulty) < settings.ladder_fault_rate * len(seats):
            continue
        result = put_on_probation(session, bot, fault_reason(session, bot_id, faulty, len(seats)), settings, now)
        if result is not None:
            paused.append(result)
    return paused


def recheck_due(db: Database, settings: Settings, health_check: HealthCheck = default_health_check,
                now: datetime | None = None, limit: int = 10) -> list[Recheck]:
    """Health-check up to ``limit`` bots whose ``recheck_at`` has come (each call outside any transaction):
    on probation, or given a new secret (``bots.hold_for_new_secret``). Resume the healthy ones; back the
    others off by one more strike (a bot that fails its first check with its new secret is put on probation)."""
    now = now or utcnow()
    with db.session(readonly=True) as session:
        due = session.execute(select(Bot.id, Bot.url, Bot.secret, Bot.game, Bot.paused_by).where(
            Bot.paused_by.in_((PausedBy.PROBATION, PausedBy.NEW_SECRET)), Bot.retired_at.is_(None),
            Bot.recheck_at <= now).order_by(Bot.recheck_at, Bot.id).limit(limit)).all()
    results = []
    for row in due:
        if row.paused_by == PausedBy.NEW_SECRET:  # restarted with its secret by now? an unsigned /act says
            report = health_check(row.url, row.secret, row.game, settings, knows_secret=True)
        else:
            report = health_check(row.url, row.secret, row.game, settings)
        with db.session() as session:
            bot = session.get(Bot, row.id)
            still_due = (bot is not None and bot.paused_by == row.paused_by and bot.retired_at is None
                         and bot.url == row.url and bot.secret == row.secret
                         and bot.recheck_at is not None and aware(bot.recheck_at) <= now)
            if not still_due:  # moved, rotated, paused, retired or re-checked meanwhile: the next tick decides
                continue
            if report.ok and report.info:
                bot.info = report.info  # what it declares now (its capacity, say)
            if report.ok and report.refuses_unsigned is False and bot.paused_by == PausedBy.NEW_SECRET:
                results.append(_not_restarted_yet(session, bot, settings, now))
                continue
            results.append(_after_recheck(session, bot, report.ok, list(report.problems), settings, now))
    return results


NOT_RESTARTED = ("it still answers requests without a signature, so it does not check the new one yet: restart it "
                 "with its secret (or resume it, if it checks no signature at all)")


def _not_restarted_yet(session: Session, bot: Bot, settings: Settings, now: datetime) -> Recheck:
    """A bot given a new secret that answers unsigned requests has not been restarted with the secret (or checks
    none): seated now, it would meet its restart in a rated match. It keeps waiting, with no strike (it did
    nothing wrong), and is looked at again every ``ARENA_LADDER_RECHECK_S``; its owner's resume seats it."""
    bot.paused_reason = NOT_RESTARTED
    bot.recheck_at = now + timedelta(seconds=settings.ladder_recheck_s)
    session.flush()
    return Recheck(bot.id, False, [NOT_RESTARTED], aware(bot.recheck_at), new_secret=True)


def _after_recheck(session: Session, bot: Bot, healthy: bool, problems: list[str], settings: Settings,
                   now: datetime) -> Recheck:
    if healthy:
        by = "new_secret" if bot.paused_by == PausedBy.NEW_SECRET else "probation"
        bot.paused_by = bot.paused_reason = bot.recheck_at = None
        bot_events.record(session, bot, BotEventKind.RESUMED, now, by=by)
        session.flush()
        return Recheck(bot.id, True, new_secret=by == "new_secret")
    if bot.paused_by == PausedBy.NEW_SECRET:
        paused = put_on_probation(session, bot, health_reason(problems, bot.url), settings, now)
        return Recheck(bot.id, False, problems, paused.recheck_at if paused is not None else None, new_secret=True)
    bot.strikes = (bot.strikes or 0) + 1
    bot.recheck_at = now + backoff(bot.strikes, settings)
    bot.paused_reason = health_reason(problems, bot.url)[:MAX_REASON]
    bot_events.record(session, bot, BotEventKind.RECHECK_FAILED, now, reason=bot.paused_reason,
                      strikes=bot.strikes, recheck_at=bot.recheck_at.isoformat())
    session.flush()
    return Recheck(bot.id, False, problems, aware(bot.recheck_at))
