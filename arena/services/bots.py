"""The bot registry: submit a URL, pass the health check, get a signing secret."""

from __future__ import annotations

import re
import secrets
from datetime import timedelta
from typing import Any, Protocol

from sqlalchemy import select
from sqlalchemy.orm import Session

from arena.config import Settings
from arena.services import bot_events, ladder_wake
from arena.services.bot_events import BotEventKind, aware, iso
from arena.services.errors import Conflict, Forbidden, Invalid, NotFound, require_id
from arena.storage.db import Database
from arena.storage.models import Account, Bot, BotStatus, PausedBy, utcnow
from referee.errors import UnsafeURL
from referee.games import GAMES
from referee.health import HealthReport, check_bot
from referee.url_guard import AddressPolicy, check_url_shape, parse_networks

BOT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 _.+-]{0,59}$")


class HealthCheck(Protocol):
    """``default_health_check`` or a test's fake. ``knows_secret``: the bot should have been restarted with
    ``secret`` by now, so an /act without a signature is sent too (``HealthReport.refuses_unsigned``)."""

    def __call__(self, url: str, secret: str, game: str, settings: Settings,
                 knows_secret: bool = False) -> HealthReport: ...


def address_guard(settings: Settings) -> AddressPolicy:
    """Production refuses every non-global address; development also allows loopback; an operator may
    trust extra networks (ARENA_ALLOW_BOT_NETWORKS) and refuse specific addresses whatever else holds
    (ARENA_DENY_BOT_ADDRESSES: the arena's own, a gateway)."""
    return AddressPolicy(allow_loopback=settings.allow_loopback_bots,
                         allowed_networks=parse_networks(settings.allow_bot_networks),
                         denied=parse_networks(settings.deny_bot_addresses))


def default_health_check(url: str, secret: str, game: str, settings: Settings,
                         knows_secret: bool = False) -> HealthReport:
    """The bot checked under the arena's limit per decision (``ARENA_DECISION_MS``), the one its ladder matches
    are played under: checked under a looser one (3 s), a bot answering in 1.5 s was admitted, then forfeited
    every ladder match, went on probation, passed its re-check under the same loose limit, and round again."""
    return check_bot(url, secret, game, guard=address_guard(settings), timeout_ms=settings.decision_ms,
                     knows_secret=knows_secret)


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
        "created_at": iso(bot.created_at),
        "version_number": bot.version,
        "lineage_id": bot.lineage_id or bot.id,
        "retired_at": iso(bot.retired_at),
        "paused_by": bot.paused_by,
        "paused_reason": bot.paused_reason,
        "recheck_at": iso(bot.recheck_at),
        "capacity": bot.capacity,
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
                 health_check: HealthCheck = default_health_check, knows_secret: bool = False) -> tuple[Bot, str]:
    """Validate, health-check, store. Returns the bot and its signing secret (shown once).

    The health check runs before ``session`` is first used, so a fresh session holds no lock while the
    bot is called; web requests use ``submit_bot``, which also checks the name first. ``knows_secret``: the
    caller hands the secret to the running bot itself (the demo's bots), so it need not wait to be restarted
    with it (``hold_for_new_secret``)."""
    name, url, game = _validate(name, url, game)
    secret = secrets.token_hex(24)
    info = _health(url, secret, game, settings, health_check, "the bot failed its health check").info
    return _store(session, owner, name, url, game, secret, info, settings, knows_secret), secret


def submit_bot(db: Database, owner_id: int, name: Any, url: Any, game: Any, settings: Settings,
               health_check: HealthCheck = default_health_check,
               knows_secret: bool = False) -> tuple[dict[str, Any], str]:
    """``register_bot`` for a web request: the bot is called outside any transaction (a health check
    takes seconds, and SQLite has one write lock for everybody). Returns the bot's JSON and secret."""
    name, url, game = _validate(name, url, game)
    with db.session(readonly=True) as session:
        _name_free(session, owner_id, name, game=game)
    secret = secrets.token_hex(24)
    report = _health(url, secret, game, settings, health_check, "the bot failed its health check")
    with db.session() as session:
        owner = session.get(Account, owner_id)
        if owner is None:
            raise NotFound("your account no longer exists")
        bot = _store(session, owner, name, url, game, secret, report.info, settings, knows_secret)
        data = bot_json(bot, owner)
        if report.warnings:  # passed, but something costs it time or safety: said once, with the fix
            data["warnings"] = list(report.warnings)
        return data, secret


def _name_free(session: Session, owner_id: int, name: str, bot_id: int | None = None, game: str | None = None) -> None:
    """Refuse a name the owner already uses, or (with ``game``) one that looks like another owner's bot of
    that game: match lists, replays and head-to-head pages name bots without their owners."""
    query = select(Bot.id).where(Bot.owner_id == owner_id, Bot.name == name)
    if bot_id is not None:
        query = query.where(Bot.id != bot_id)
    taken = session.execute(query.add_columns(Bot.retired_at)).first()
    if taken is not None:
        hint = ": it is retired; publish a new version of it to bring it back" if taken.retired_at else ""
        raise Conflict(f"you already have a bot called {name!r}{hint}")
    if game is not None:
        wanted = look_alike(name)
        for other in session.scalars(select(Bot.name).where(Bot.game == game, Bot.owner_id != owner_id)):
            if look_alike(other) == wanted:
                raise Conflict(f"{name!r} looks like {other!r}, another owner's bot: choose a name of your own")


_CONFUSABLE = str.maketrans({"0": "o", "1": "l", "i": "l", "5": "s", "_": "-", " ": "-", ".": "-", "+": "-"})
_SEPARATORS = re.compile(r"-+")


def look_alike(name: str) -> str:
    """What a bot name looks like on a page: case, separators and the ASCII letters that pass for one
    another folded ("PP_heur1stic" and "pp-heuristic" look alike; "rn" reads as "m", "vv" as "w")."""
    text = name.casefold().replace("rn", "m").replace("vv", "w").translate(_CONFUSABLE)
    return _SEPARATORS.sub("-", text).strip("-")


def _health(url: str, secret: str, game: str, settings: Settings, health_check: HealthCheck,
            refusal: str) -> HealthReport:
    """The passed report (the bot's identity, warnings), or ``Invalid`` naming what failed; never called
    inside a transaction."""
    report = health_check(url, secret, game, settings) if settings.health_check else HealthReport(ok=True)
    if not report.ok:
        raise Invalid(refusal, {"problems": report.problems})
    return report


def _store(session: Session, owner: Account, name: str, url: str, game: str, secret: str,
           info: dict[str, Any], settings: Settings, knows_secret: bool) -> Bot:
    """The new bot, held for its restart with ``secret`` unless its caller hands the secret to it itself."""
    _name_free(session, owner.id, name, game=game)  # again: another request may have taken it meanwhile
    bot = Bot(owner_id=owner.id, owner=owner, name=name, url=url, game=game, secret=secret, info=info,
              status=BotStatus.ACTIVE)
    session.add(bot)
    session.flush()
    ladder_wake.wake_after_commit(session)  # the ladder places a new bot at once (or holds it, below)
    if not knows_secret:
        hold_for_new_secret(session, bot, settings)
    return bot


def hold_for_new_secret(session: Session, bot: Bot, settings: Settings) -> None:
    """Keep a bot that was just given a signing secret off the ladder for ``ARENA_LADDER_NEW_SECRET_S``.

    Its owner learns the secret only now and restarts the bot with it; a ladder match in that gap would
    meet a bot that is down or refuses the new signatures, count as a rated loss and soon put it on
    probation. Once the time is up, probation's re-checks (``probation.recheck_due``) check that it was
    restarted with the secret (it refuses an unsigned request) and put it on the ladder; its owner's
    *Resume* does so at once, with no such probe (a bot may check no signature at all). A bot on probation
    stays there, re-checked no sooner than this; one its owner paused is left as it is."""
    if not settings.ladder or settings.ladder_new_secret_s <= 0 or bot.retired_at is not None:
        return
    now = utcnow()
    until = now + timedelta(seconds=settings.ladder_new_secret_s)
    if bot.paused_by == PausedBy.PROBATION:  # a re-check in the middle of the restart would be a strike
        bot.recheck_at = max(aware(bot.recheck_at) or until, until)
    if bot.paused_by not in (None, PausedBy.NEW_SECRET):
        return
    bot.paused_by, bot.paused_reason, bot.recheck_at = PausedBy.NEW_SECRET, None, until
    bot_events.record(session, bot, BotEventKind.AWAITING_SECRET, now, until=iso(until))
    session.flush()


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
    """Rename, move to a new URL (health-checked again) or switch status; owner only. Scripts and tests
    use it; web requests use ``change_bot``, which calls the bot outside any transaction."""
    bot = _owned(session, bot_id, account)
    name, url = _checked_changes(session, bot, changes)
    info = None
    if url != bot.url:
        info = _health(url, bot.secret, bot.game, settings, health_check, "the new URL failed its health check").info
    return _apply(session, bot, changes, name, url, info)


def change_bot(db: Database, bot_id: int, account_id: int, changes: dict[str, Any], settings: Settings,
               health_check: HealthCheck = default_health_check) -> dict[str, Any]:
    """``update_bot`` for a web request: checks in a read-only unit, health check with no transaction
    open, then the write. Returns the bot's JSON as its owner sees it."""
    with db.session(readonly=True) as session:
        bot = _owned_by_id(session, bot_id, account_id)
        name, url = _checked_changes(session, bot, changes)
        info = None
        moved, secret, game = url != bot.url, bot.secret, bot.game
    if moved:
        info = _health(url, secret, game, settings, health_check, "the new URL failed its health check").info
    with db.session() as session:
        bot = _owned_by_id(session, bot_id, account_id)
        _checked_changes(session, bot, changes)
        _apply(session, bot, changes, name, url, info)
        return bot_json(bot, bot.owner)


def _owned_by_id(session: Session, bot_id: int, account_id: int) -> Bot:
    account = session.get(Account, account_id)
    if account is None:
        raise NotFound("your account no longer exists")
    return _owned(session, bot_id, account)


def _checked_changes(session: Session, bot: Bot, changes: dict[str, Any]) -> tuple[str, str]:
    """The bot's name and URL after ``changes``, validated (reads only)."""
    unknown = sorted(set(changes) - {"name", "url", "status"})
    if bot.retired_at is not None and changes:
        raise Conflict(f"{bot.name} is retired: publish a new version to bring it back")
    if unknown:
        raise Invalid(f"unknown field(s) {unknown}; you may change name, url and status")
    name, url, _ = _validate(changes.get("name", bot.name), changes.get("url", bot.url), bot.game)
    if "status" in changes and changes["status"] not in (BotStatus.ACTIVE, BotStatus.DISABLED):
        raise Invalid("status must be 'active' or 'disabled'")
    if name != bot.name:
        _name_free(session, bot.owner_id, name, bot.id, bot.game)
    return name, url


def _apply(session: Session, bot: Bot, changes: dict[str, Any], name: str, url: str,
           info: dict[str, Any] | None) -> Bot:
    if "status" in changes and changes["status"] != bot.status:
        bot.status = changes["status"]
        kind = BotEventKind.RESUMED if bot.status == BotStatus.ACTIVE else BotEventKind.PAUSED
        bot_events.record(session, bot, kind, by="owner")
    bot.name = name
    if info is not None:
        if url != bot.url:  # same version, same leaderboard entry: a move of hosts, kept in its log
            bot_events.record(session, bot, BotEventKind.URL_MOVED, old_url=bot.url, new_url=url)
        bot.url, bot.info = url, info
    session.flush()
    return bot


def delete_bot(session: Session, bot_id: int, account: Account) -> None:
    """Retire a bot: it keeps its name, page, history (matches, ratings) but plays no more
    (``bot_versions.retire``; a new version brings it back as a new entry)."""
    from arena.services.bot_versions import retire  # bot_versions builds on this module

    retire(session, _owned(session, bot_id, account))
