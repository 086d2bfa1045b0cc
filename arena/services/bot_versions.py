"""Versions of a bot: publishing a new one (new URL, or the same URL declared new) and retiring.

Every version is its own ``Bot`` row, so its own leaderboard entry that starts provisional (as Kaggle
treats every submission); ``lineage_id`` is the first version's id. Names stay unique per owner (the
``uq_bot_owner_name`` constraint, which SQLite could only drop by rebuilding the bots table): the newest
version carries the bot's name, and the version it replaces is renamed "<name> (v<n>)", so a leaderboard
or an old match list tells the versions apart. The new version keeps the signing secret, the capacity
and the owner's settings: the program at the URL is already configured with that secret."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from arena.config import Settings
from arena.services import bot_events
from arena.services.bot_events import BotEventKind, iso
from arena.services.bots import (
    HealthCheck,
    _health,
    _owned_by_id,
    _validate,
    bot_json,
    default_health_check,
)
from arena.services.errors import Conflict
from arena.storage.db import Database
from arena.storage.models import Bot, BotStatus, PausedBy, utcnow


def lineage_of(bot: Bot) -> int:
    return bot.lineage_id or bot.id


def versions(session: Session, bot: Bot) -> list[Bot]:
    """Every version of ``bot``'s lineage, oldest first."""
    root = lineage_of(bot)
    return list(session.scalars(select(Bot).where((Bot.id == root) | (Bot.lineage_id == root)).order_by(Bot.version)))


def _newest_version(session: Session, bot: Bot) -> int:
    root = lineage_of(bot)
    return session.scalar(select(func.max(Bot.version)).where((Bot.id == root) | (Bot.lineage_id == root))) or 1


def _check_newest(session: Session, bot: Bot) -> None:
    newest = _newest_version(session, bot)
    if bot.version != newest:
        raise Conflict(f"this is version {bot.version}; version {newest} replaced it: publish from the newest version")


def _archived_name(session: Session, bot: Bot) -> str:
    """The name a replaced version keeps: "<name> (v<n>)" (parentheses: no submitted name has them)."""
    for candidate in (f"{bot.name} (v{bot.version})", f"{bot.name} (v{bot.version}, bot {bot.id})"):
        taken = session.scalar(select(Bot.id).where(Bot.owner_id == bot.owner_id, Bot.name == candidate[:80],
                                                    Bot.id != bot.id))
        if taken is None:
            return candidate[:80]
    return f"bot {bot.id} (v{bot.version})"


def publish_version(db: Database, bot_id: int, account_id: int, url: Any, settings: Settings,
                    health_check: HealthCheck = default_health_check) -> dict[str, Any]:
    """A new version of the owner's bot at ``url`` (None or empty: the same URL, declared new), health-checked
    with no transaction open; the replaced version is retired. Returns the new version as its owner sees it."""
    with db.session(readonly=True) as session:
        bot = _owned_by_id(session, bot_id, account_id)
        _check_newest(session, bot)
        _, new_url, _ = _validate(bot.name, url or bot.url, bot.game)
        secret, game = bot.secret, bot.game
    report = _health(new_url, secret, game, settings, health_check, "the new version failed its health check")
    with db.session() as session:
        old = _owned_by_id(session, bot_id, account_id)
        session.refresh(old, with_for_update=True)  # two publishes at once: the second sees the first
        _check_newest(session, old)
        now = utcnow()
        name, old_hold, old_reason, old_until = old.name, old.paused_by, old.paused_reason, old.recheck_at
        old.name = _archived_name(session, old)
        if old.retired_at is None:
            old.retired_at = now
            bot_events.record(session, old, BotEventKind.RETIRED, now,
                              reason=f"replaced by version {old.version + 1}")
        old.status = BotStatus.DISABLED
        session.flush()  # the name is free before the new version takes it
        new = Bot(owner_id=old.owner_id, owner=old.owner, name=name, url=new_url, game=old.game, secret=secret,
                  info=report.info, status=BotStatus.ACTIVE, lineage_id=lineage_of(old), version=old.version + 1,
                  capacity=old.capacity)
        session.add(new)
        session.flush()
        bot_events.record(session, old, BotEventKind.VERSION_PUBLISHED, now, version=new.version, to_bot_id=new.id)
        bot_events.record(session, new, BotEventKind.VERSION_PUBLISHED, now, version=new.version,
                          from_bot_id=old.id)
        if old_hold == PausedBy.NEW_SECRET:  # same secret, still waiting for its restart: so is the new version
            new.paused_by, new.paused_reason, new.recheck_at = PausedBy.NEW_SECRET, old_reason, old_until
            bot_events.record(session, new, BotEventKind.AWAITING_SECRET, now, until=iso(old_until))
            session.flush()
        data = bot_json(new, new.owner)
        if report.warnings:
            data["warnings"] = list(report.warnings)
        return data


def retire(session: Session, bot: Bot, reason: str = "retired by its owner") -> Bot:
    """Off the ladder for good; keeps its name, page, matches and last rating. Publishing a new version
    from it brings the bot back as a new entry."""
    if bot.retired_at is not None:
        return bot
    now = utcnow()
    bot.retired_at, bot.status = now, BotStatus.DISABLED
    bot.paused_by = bot.paused_reason = bot.recheck_at = None
    bot_events.record(session, bot, BotEventKind.RETIRED, now, reason=reason)
    session.flush()
    return bot
