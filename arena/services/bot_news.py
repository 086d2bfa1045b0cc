"""What the ladder scheduler's terminal tells of the bots: each submission and what owners do (pause, resume,
a new version, secret, URL or capacity, retirement, the wait for a restart with a new secret), by bot name,
from the bots' log.

These happen in the web app's process, whose terminal shows only requests; the scheduler's terminal is where an
operator watches the ladder (``arena up``), and it said nothing of them: an operator could not tell why a new
bot was not placed. URLs are never told (the terminal may be watched by others than the operator); probation's
own lines (``probation.Recheck.line``, the tick's report) tell re-checks, strikes and the resumes they make.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from arena.services.bot_events import BotEventKind, event_json
from arena.storage.models import Account, Bot, BotEvent

# Ids are handed out before their transaction commits (PostgreSQL's sequences), so a row below the newest one
# told may still appear: the news looks this far back and skips what it told already.
LOOKBACK = 100

_TOLD = {BotEventKind.PAUSED, BotEventKind.RESUMED, BotEventKind.RETIRED, BotEventKind.VERSION_PUBLISHED,
         BotEventKind.SECRET_ROTATED, BotEventKind.CAPACITY, BotEventKind.URL_MOVED, BotEventKind.AWAITING_SECRET}


@dataclass(frozen=True)
class NewsCursor:
    """Where the news goes on from: the newest bot and event told, and what was told within ``LOOKBACK``."""

    bot_id: int = 0
    event_id: int = 0
    told_bots: frozenset[int] = frozenset()
    told_events: frozenset[int] = frozenset()


@dataclass
class News:
    lines: list[str] = field(default_factory=list)
    awaiting: set[int] = field(default_factory=set)  # bots given a secret since: a new wait for their restart


def news_start(session: Session) -> NewsCursor:
    """The news starts now: what came before a scheduler took over is not told again."""
    bot_id = session.scalar(select(func.max(Bot.id))) or 0
    event_id = session.scalar(select(func.max(BotEvent.id))) or 0
    return NewsCursor(bot_id, event_id,
                      frozenset(session.scalars(select(Bot.id).where(Bot.id > bot_id - LOOKBACK))),
                      frozenset(session.scalars(select(BotEvent.id).where(BotEvent.id > event_id - LOOKBACK))))


def news_since(session: Session, cursor: NewsCursor, limit: int = 200) -> tuple[NewsCursor, News]:
    """The lines for the bots submitted and the bots' events since ``cursor`` (oldest first), and the cursor to
    go on from."""
    news = News()
    bots = session.execute(select(Bot.id, Bot.name, Bot.game, Account.name, Bot.lineage_id)
                           .join(Account, Account.id == Bot.owner_id)
                           .where(Bot.id > cursor.bot_id - LOOKBACK, Bot.id.not_in(cursor.told_bots))
                           .order_by(Bot.id).limit(limit)).all()
    news.lines += [f"bot {name} ({game}) submitted by {owner}" for _id, name, game, owner, lineage in bots
                   if lineage is None]  # a new version is told by its own event
    events = session.execute(select(BotEvent, Bot.name, Bot.game).join(Bot, Bot.id == BotEvent.bot_id)
                             .where(BotEvent.id > cursor.event_id - LOOKBACK, BotEvent.id.not_in(cursor.told_events))
                             .order_by(BotEvent.id).limit(limit)).all()
    for event, name, game in events:
        if event.kind == BotEventKind.AWAITING_SECRET:
            news.awaiting.add(event.bot_id)
        if (line := news_line(event, name, game)) is not None:
            news.lines.append(line)
    bot_id, told_bots = _onwards(cursor.bot_id, cursor.told_bots, {row[0] for row in bots})
    event_id, told_events = _onwards(cursor.event_id, cursor.told_events, {row[0].id for row in events})
    return NewsCursor(bot_id, event_id, told_bots, told_events), news


def _onwards(newest: int, told: frozenset[int], seen: set[int]) -> tuple[int, frozenset[int]]:
    """The newest id told and the ids told within ``LOOKBACK`` of it, once ``seen`` are told too."""
    newest = max(newest, *seen) if seen else newest
    return newest, frozenset(i for i in told | seen if i > newest - LOOKBACK)


def news_line(event: BotEvent, name: str, game: str) -> str | None:
    """``bot pp-mine (piranha-pedro): paused by its owner``; None for what other lines tell."""
    kind = BotEventKind(event.kind) if event.kind in BotEventKind._value2member_map_ else None
    detail = event.detail or {}
    if kind not in _TOLD or (kind == BotEventKind.RESUMED and detail.get("by") != "owner"):
        return None
    if kind == BotEventKind.RESUMED:
        summary = "resumed by its owner: on the ladder"
    elif kind == BotEventKind.URL_MOVED:
        summary = "moved to a new URL (same version, same rating)"
    elif kind == BotEventKind.AWAITING_SECRET:
        until = datetime.fromisoformat(detail["until"]).strftime("%H:%M:%S UTC")
        summary = (f"given a signing secret: off the ladder until its owner restarts it with it (looked at from "
                   f"{until}, or at once when its owner resumes it)")
    else:
        summary = event_json(event, owner_view=False)["summary"]
    return f"bot {name} ({game}): {summary}"
