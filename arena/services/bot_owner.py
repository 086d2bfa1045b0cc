"""What a bot's owner may do to it besides versions: pause and resume it on the ladder, set how many
matches it plays at once, rotate its signing secret. Every change is a ``BotEvent``."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Any

from sqlalchemy.orm import Session

from arena.config import Settings
from arena.services import bot_events
from arena.services.bot_events import BotEventKind
from arena.services.bots import (
    HealthCheck,
    _health,
    _owned,
    _owned_by_id,
    bot_json,
    default_health_check,
    hold_for_new_secret,
)
from arena.services.errors import Conflict, Invalid
from arena.storage.db import Database
from arena.storage.models import Account, Bot, BotStatus, PausedBy, utcnow

MAX_REASON = 200


def _current(bot: Bot) -> Bot:
    if bot.retired_at is not None:
        raise Conflict(f"{bot.name} is retired: publish a new version to bring it back")
    return bot


def pause(session: Session, bot_id: int, account: Account, reason: Any = None) -> Bot:
    """Off the ladder until its owner resumes it (an owner's pause outlasts probation: no re-check
    resumes it)."""
    bot = _current(_owned(session, bot_id, account))
    if reason is not None and not isinstance(reason, str):
        raise Invalid("reason must be a string")
    text = (reason or "").strip()[:MAX_REASON] or None
    if text is not None and not text.isprintable():  # a line break or an escape would forge lines elsewhere
        raise Invalid("reason must be one line of printable text")
    if bot.paused_by == PausedBy.OWNER and bot.paused_reason == text:
        return bot
    bot.paused_by, bot.paused_reason, bot.recheck_at = PausedBy.OWNER, text, None
    bot_events.record(session, bot, BotEventKind.PAUSED, by="owner", **({"reason": text} if text else {}))
    session.flush()
    return bot


def resume(db: Database, bot_id: int, account_id: int, settings: Settings,
           health_check: HealthCheck = default_health_check) -> dict[str, Any]:
    """Back on the ladder, after a health check (no transaction open): a bot that fails it stays paused, with
    the problems in the error. So the owner need not wait for probation's back-off, nor for
    ``ARENA_LADDER_NEW_SECRET_S``; and the check is made whatever paused the bot: a pause laid over probation
    or over the wait for a restart, then a resume, put a dead bot back on the ladder with no check at all (a
    red-team review)."""
    with db.session(readonly=True) as session:
        bot = _current(_owned_by_id(session, bot_id, account_id))
        check_first = bot.paused_by is not None or bot.status != BotStatus.ACTIVE
        url, secret, game = bot.url, bot.secret, bot.game
    if check_first:
        _health(url, secret, game, settings, health_check, "the bot still fails its health check")
    with db.session() as session:
        bot = _current(_owned_by_id(session, bot_id, account_id))
        if check_first and (bot.url, bot.secret) != (url, secret):  # moved or given a newer secret meanwhile
            raise Conflict(f"{bot.name} changed while it was checked (a new URL or secret): resume it again")
        if bot.paused_by is not None or bot.status != BotStatus.ACTIVE:
            # a resume that ends a probation (after a passing check) forgives the faults before it; one that
            # ends the owner's own pause does not (``bot_events.last_resumed_at``)
            ended = {"ended": "probation"} if bot.paused_by == PausedBy.PROBATION else {}
            bot.paused_by = bot.paused_reason = bot.recheck_at = None
            bot.status = BotStatus.ACTIVE
            bot_events.record(session, bot, BotEventKind.RESUMED, by="owner", **ended)
        session.flush()
        return bot_json(bot, bot.owner)


def effective_capacity(bot: Bot, settings: Settings) -> int:
    """How many ladder matches the bot may play at once, never above the arena's cap: what it declares in
    ``GET /`` (``capacity``: the bot knows what it can serve, more or less than its owner set), else its
    owner's setting (default 1). A declaration is what lets a threaded bot (the SDK's) play a newcomer's
    placement while it is at another table, so the newcomer's first match need not wait for it."""
    declared = bot.info.get("capacity") if isinstance(bot.info, dict) else None
    if isinstance(declared, int) and not isinstance(declared, bool) and declared >= 1:
        wanted = declared
    else:
        wanted = bot.capacity or 1
    return max(1, min(wanted, settings.ladder_max_capacity))


def set_capacity(session: Session, bot_id: int, account: Account, capacity: Any, settings: Settings) -> Bot:
    bot = _current(_owned(session, bot_id, account))
    top = settings.ladder_max_capacity
    if isinstance(capacity, bool) or not isinstance(capacity, int) or not 1 <= capacity <= top:
        raise Invalid(f"capacity must be a whole number from 1 to {top} (the arena's cap)")
    if capacity != bot.capacity:
        bot_events.record(session, bot, BotEventKind.CAPACITY, old=bot.capacity, new=capacity)
        bot.capacity = capacity
        session.flush()
    return bot


def rotate_secret(session: Session, bot_id: int, account: Account, settings: Settings) -> tuple[Bot, str]:
    """A new signing secret, returned once and never shown again. Requests are signed with it at once: a bot
    on the ladder leaves it while its owner restarts it with the secret (``bots.hold_for_new_secret``)."""
    bot = _current(_owned(session, bot_id, account))
    bot.secret = secrets.token_hex(24)
    bot_events.record(session, bot, BotEventKind.SECRET_ROTATED, utcnow())
    hold_for_new_secret(session, bot, settings)
    session.flush()
    return bot, bot.secret


def fingerprint(secret: str) -> str:
    """Names a secret without revealing it: what a page keeps between the post and the page that shows
    the secret once (the secret itself never goes into a cookie)."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()[:24]


def secret_to_show(session: Session, bot_id: int, account: Account, expected: str) -> str | None:
    """The owner's bot's secret if it is still the one ``expected`` names (not rotated since)."""
    bot = session.get(Bot, bot_id)
    if bot is None or bot.owner_id != account.id or not hmac.compare_digest(fingerprint(bot.secret), expected):
        return None
    return bot.secret
