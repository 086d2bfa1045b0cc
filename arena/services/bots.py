"""The bot registry: submit a URL, pass the health check, get a signing secret."""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from arena.config import Settings
from arena.services.errors import Conflict, Forbidden, Invalid, NotFound, require_id
from arena.storage.models import Account, Bot, BotStatus
from referee.errors import UnsafeURL
from referee.games import GAMES
from referee.health import HealthReport, check_bot
from referee.url_guard import AddressPolicy, check_url_shape, parse_networks

BOT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 _.+-]{0,59}$")
HealthCheck = Callable[[str, str, str, Settings], HealthReport]


def address_guard(settings: Settings) -> AddressPolicy:
    """Production refuses every non-global address; development also allows loopback; an operator may
    trust extra networks (ARENA_ALLOW_BOT_NETWORKS)."""
    return AddressPolicy(allow_loopback=settings.allow_loopback_bots,
                         allowed_networks=parse_networks(settings.allow_bot_networks))


def default_health_check(url: str, secret: str, game: str, settings: Settings) -> HealthReport:
    return check_bot(url, secret, game, guard=address_guard(settings))


def bot_json(bot: Bot, viewer: Account | None) -> dict[str, Any]:
    """A bot as the API shows it; the URL only to its owner (the secret only once, at creation)."""
    data = {
        "id": bot.id,
        "name": bot.name,
        "owner": bot.owner.name,
        "game": bot.game,
        "status": bot.status,
        "version": bot.info.get("version"),
        "author": bot.info.get("author"),
        "created_at": bot.created_at.isoformat(),
    }
    if viewer is not None and viewer.id == bot.owner_id:
        data["url"] = bot.url
    return data


def _validate(name: Any, url: Any, game: Any) -> tuple[str, str, str]:
    if not isinstance(name, str) or not BOT_NAME.fullmatch(name):
        raise Invalid("name must be 1-60 characters of letters, digits, spaces and _ . + -")
    if not isinstance(game, str) or game not in GAMES:
        raise Invalid(f"game must be one of {sorted(GAMES)}")
    if isinstance(url, str) and any(ord(ch) < 0x21 or ord(ch) == 0x7F for ch in url.strip()):
        raise Invalid("a bot URL may not contain spaces or control characters")
    try:
        url = check_url_shape(url)
    except UnsafeURL as exc:
        raise Invalid(str(exc)) from None
    except ValueError as exc:  # urlsplit: e.g. an unclosed IPv6 bracket
        raise Invalid(f"not a valid URL: {exc}") from None
    return name, url, game


def register_bot(session: Session, owner: Account, name: Any, url: Any, game: Any, settings: Settings,
                 health_check: HealthCheck = default_health_check) -> tuple[Bot, str]:
    """Validate, health-check, store. Returns the bot and its signing secret (shown once)."""
    name, url, game = _validate(name, url, game)
    if session.scalar(select(Bot.id).where(Bot.owner_id == owner.id, Bot.name == name)) is not None:
        raise Conflict(f"you already have a bot called {name!r}")
    secret = secrets.token_hex(24)
    report = health_check(url, secret, game, settings) if settings.health_check else HealthReport(ok=True)
    if not report.ok:
        raise Invalid("the bot failed its health check", {"problems": report.problems})
    bot = Bot(owner_id=owner.id, owner=owner, name=name, url=url, game=game, secret=secret, info=report.info,
              status=BotStatus.ACTIVE)
    session.add(bot)
    session.flush()
    return bot, secret


def get_bot(session: Session, bot_id: int) -> Bot:
    require_id(bot_id, "bot")
    bot = session.get(Bot, bot_id)
    if bot is None:
        raise NotFound(f"no bot {bot_id}")
    return bot


def list_bots(session: Session, game: str | None = None, owner_id: int | None = None, limit: int = 100,
              offset: int = 0) -> list[Bot]:
    query = select(Bot).order_by(Bot.id)
    if game:
        query = query.where(Bot.game == game)
    if owner_id is not None:
        query = query.where(Bot.owner_id == owner_id)
    return list(session.scalars(query.limit(limit).offset(offset)))


def _owned(session: Session, bot_id: int, account: Account) -> Bot:
    bot = get_bot(session, bot_id)
    if bot.owner_id != account.id:
        raise Forbidden("only the bot's owner may change it")
    return bot


def update_bot(session: Session, bot_id: int, account: Account, changes: dict[str, Any], settings: Settings,
               health_check: HealthCheck = default_health_check) -> Bot:
    """Rename, move to a new URL (health-checked again) or switch status; owner only."""
    bot = _owned(session, bot_id, account)
    unknown = sorted(set(changes) - {"name", "url", "status"})
    if unknown:
        raise Invalid(f"unknown field(s) {unknown}; you may change name, url and status")
    name = changes.get("name", bot.name)
    url = changes.get("url", bot.url)
    name, url, _ = _validate(name, url, bot.game)
    if "status" in changes:
        if changes["status"] not in (BotStatus.ACTIVE, BotStatus.DISABLED):
            raise Invalid("status must be 'active' or 'disabled'")
        bot.status = changes["status"]
    if name != bot.name:
        if session.scalar(select(Bot.id).where(Bot.owner_id == account.id, Bot.name == name)) is not None:
            raise Conflict(f"you already have a bot called {name!r}")
        bot.name = name
    if url != bot.url:
        report = health_check(url, bot.secret, bot.game, settings) if settings.health_check else HealthReport(ok=True)
        if not report.ok:
            raise Invalid("the new URL failed its health check", {"problems": report.problems})
        bot.url, bot.info = url, report.info
    session.flush()
    return bot


def delete_bot(session: Session, bot_id: int, account: Account) -> None:
    """Retire a bot: it keeps its history (matches, ratings) but plays no more."""
    bot = _owned(session, bot_id, account)
    bot.status = BotStatus.DISABLED
    bot.name = f"{bot.name} (deleted {bot.id})"[:80]
    bot.url = "http://deleted.invalid"
    session.flush()
