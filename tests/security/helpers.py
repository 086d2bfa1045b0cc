"""Helpers for the security tests: a health check that never leaves the machine, and a small world of
accounts and bots stored directly."""

from __future__ import annotations

import ipaddress
import secrets
from dataclasses import dataclass
from urllib.parse import urlsplit

from arena.composition import Context
from arena.config import Settings
from arena.services.accounts import create_account
from arena.storage.models import Bot, BotStatus
from referee.health import HealthReport


def offline_health_check(url: str, secret: str, game: str, settings: Settings,
                         knows_secret: bool = False) -> HealthReport:
    """A health check that never resolves a name and never connects: a URL whose host is not an IP
    literal on loopback is refused with a clear problem; a loopback literal passes as a healthy bot.
    Generated bot URLs (fuzzing) therefore cannot make the app reach the DNS or any other machine."""
    try:
        host = urlsplit(url).hostname
    except ValueError as exc:
        return HealthReport(ok=False, problems=[f"offline health check: unparsable URL ({exc})"])
    try:
        address = ipaddress.ip_address((host or "").split("%", 1)[0])
    except ValueError:
        return HealthReport(ok=False, problems=[f"offline health check: {host!r} is not an IP literal; "
                                                "names are never resolved in the security tests"])
    if not address.is_loopback:
        return HealthReport(ok=False, problems=[f"offline health check: {address} is not a loopback address"])
    info = {"apiversion": "1", "name": "offline", "author": "security-tests", "version": "1", "games": [game]}
    return HealthReport(ok=True, info=info)


@dataclass(frozen=True)
class World:
    """Who is who: tokens of a bot owner, a stranger and an organizer, and the owner's bots."""

    owner: str
    stranger: str
    organizer: str
    bot_ids: tuple[int, ...]  # the bots of the first game, one per URL
    secrets: tuple[str, ...]
    urls: tuple[str, ...]
    bots_by_game: dict[str, tuple[int, ...]]


def build_world(ctx: Context, urls: list[str], games: tuple[str, ...] = ("piranha-pedro",)) -> World:
    """Accounts, and one active bot per URL and game stored directly (no health check)."""
    with ctx.db.session() as session:
        owner, owner_token = create_account(session, "owner")
        _stranger, stranger_token = create_account(session, "stranger")
        _organizer, organizer_token = create_account(session, "organizer", admin=True)
        by_game: dict[str, list[Bot]] = {}
        for game in games:
            by_game[game] = [Bot(owner_id=owner.id, owner=owner, name=f"{game}-{i}", url=url, game=game,
                                 secret=secrets.token_hex(24), info={"version": "1", "author": "owner"},
                                 status=BotStatus.ACTIVE) for i, url in enumerate(urls)]
            session.add_all(by_game[game])
        session.flush()
        first = by_game[games[0]]
        world = World(owner_token, stranger_token, organizer_token, tuple(b.id for b in first),
                      tuple(b.secret for b in first), tuple(urls),
                      {game: tuple(b.id for b in bots) for game, bots in by_game.items()})
    return world
