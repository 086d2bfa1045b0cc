"""A bot's log outside its matches (``bot_events``): URL moved, paused, resumed, probation, re-checks,
versions, retirement, secret rotated, capacity. Written in the transaction of the change it records."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from arena.services import ladder_wake
from arena.storage.models import Bot, BotEvent, utcnow


class BotEventKind(StrEnum):
    URL_MOVED = "url_moved"  # detail: old_url, new_url (shown to the owner only)
    PAUSED = "paused"  # by the owner; detail: by
    RESUMED = "resumed"  # detail: by ("owner" | "probation": a re-check passed | "new_secret": its first check)
    PROBATION = "probation"  # put on probation; detail: reason, strikes, recheck_at
    RECHECK_FAILED = "recheck_failed"  # still unhealthy; detail: problems, strikes, recheck_at
    VERSION_PUBLISHED = "version_published"  # detail: version, from_bot_id | to_bot_id
    RETIRED = "retired"  # detail: reason
    SECRET_ROTATED = "secret_rotated"  # no detail: the secret itself is never logged
    CAPACITY = "capacity_changed"  # detail: old, new
    AWAITING_SECRET = "awaiting_secret"  # off the ladder until restarted with a new secret; detail: until


PRIVATE_DETAIL = {BotEventKind.URL_MOVED}  # only the owner sees these details (URLs are private)


def aware(moment: datetime | None) -> datetime | None:
    """SQLite hands timestamps back without their zone; every one the arena stores is UTC."""
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=UTC)


def iso(moment: datetime | None) -> str | None:
    moment = aware(moment)
    return moment.isoformat() if moment is not None else None


def record(session: Session, bot: Bot, kind: BotEventKind, at: datetime | None = None, **detail: Any) -> BotEvent:
    event = BotEvent(bot_id=bot.id, kind=str(kind), detail=detail, created_at=at or utcnow())
    session.add(event)
    # back on the ladder: placed at once; waiting for a restart: no new table for it from the next tick
    if kind in (BotEventKind.RESUMED, BotEventKind.VERSION_PUBLISHED, BotEventKind.AWAITING_SECRET):
        ladder_wake.wake_after_commit(session)
    return event


def events(session: Session, bot_id: int, limit: int = 50) -> list[BotEvent]:
    """Newest first."""
    query = select(BotEvent).where(BotEvent.bot_id == bot_id).order_by(BotEvent.id.desc()).limit(limit)
    return list(session.scalars(query))


def last_resumed_at(session: Session, bot_id: int) -> datetime | None:
    """When the bot last came back from probation (its re-check, or its owner's resume after a passing check)
    or first joined the ladder: faults before it are not held against it again.

    An owner's resume of the owner's own pause is not such a moment. It was: a red-team owner who paused and
    resumed its bot after every table (a table is 3 matches; probation judges no fewer than 4 since the last
    resume) was never judged, however often it faulted."""
    query = (select(BotEvent.created_at, BotEvent.detail).where(BotEvent.bot_id == bot_id,
                                                                BotEvent.kind == BotEventKind.RESUMED)
             .order_by(BotEvent.id.desc()).limit(50))
    for created_at, detail in session.execute(query):
        detail = detail or {}
        if detail.get("by") != "owner" or detail.get("ended") == "probation":
            return created_at
    return None


_WORDS = {
    BotEventKind.URL_MOVED: "moved to a new URL (same version, same rating)",
    BotEventKind.PAUSED: "paused by its owner",
    BotEventKind.RESUMED: "back on the ladder",
    BotEventKind.PROBATION: "put on probation",
    BotEventKind.RECHECK_FAILED: "re-check failed, still on probation",
    BotEventKind.VERSION_PUBLISHED: "version published",
    BotEventKind.RETIRED: "retired from the ladder",
    BotEventKind.SECRET_ROTATED: "signing secret rotated",
    BotEventKind.CAPACITY: "capacity changed",
    BotEventKind.AWAITING_SECRET: "off the ladder while its owner restarts it with the signing secret it was given",
}


def event_json(event: BotEvent, owner_view: bool) -> dict[str, Any]:
    """An event as the API and pages show it; private details (URLs) to the owner only."""
    detail = dict(event.detail or {})
    if event.kind in PRIVATE_DETAIL and not owner_view:
        detail = {}
    kind = BotEventKind(event.kind) if event.kind in BotEventKind._value2member_map_ else None
    words = _WORDS.get(kind, event.kind) if kind is not None else event.kind
    return {"id": event.id, "kind": event.kind, "summary": _summary(words, detail), "detail": detail,
            "created_at": iso(event.created_at)}


def _summary(words: str, detail: dict[str, Any]) -> str:
    if "reason" in detail:
        return f"{words}: {detail['reason']}"
    if "version" in detail:
        return f"{words}: version {detail['version']}"
    if "by" in detail and detail["by"] == "probation":
        return f"{words}: its re-check passed"
    if "by" in detail and detail["by"] == "new_secret":
        return "on the ladder: its check after it was given its secret passed"
    if "until" in detail:
        until = datetime.fromisoformat(detail["until"]).strftime("%Y-%m-%d %H:%M:%S UTC")
        return f"{words}: checked and on it from {until} once restarted, or at once when resumed"
    if "new" in detail and "old" in detail:
        return f"{words}: {detail['old']} → {detail['new']}"
    if "new_url" in detail:
        return f"{words}: {detail['old_url']} → {detail['new_url']}"
    return words
