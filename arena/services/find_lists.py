"""The index pages' lists: bots, tournaments and leaderboards, filtered and paged by id (never OFFSET).

Each list reads one page of ids and then what its rows show in one query per kind (ratings, owners,
progress), never one query per row.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session

from arena.services.errors import MAX_ID, Invalid
from arena.services.page_queries import bot_names, progress_many
from arena.storage.models import (
    Account,
    Bot,
    Ladder,
    LeaderboardFit,
    Match,
    MatchSeat,
    Rating,
    Tournament,
    TournamentStatus,
)
from referee.games import GAMES

PAGE_SIZE = 50
BOT_STATES = ("active", "disabled", "retired")


@dataclass(frozen=True)
class ListFilter:
    """Filters shared by the bot and tournament lists (each uses the fields that mean something to it)."""

    game: str | None = None
    players: int | None = None
    status: str | None = None
    bot: int | None = None
    name: str | None = None
    before: int | None = None
    after: int | None = None

    def query_args(self, **changes: Any) -> dict[str, Any]:
        return {k: v for k, v in asdict(replace(self, **changes)).items() if v is not None}


def parse_list_filter(args: Mapping[str, str], statuses: tuple[str, ...]) -> ListFilter:
    """A ``ListFilter`` from query arguments; 422 for what names nothing."""
    def number(name: str, low: int, high: int) -> int | None:
        raw = (args.get(name) or "").strip()
        if not raw:
            return None
        if not raw.isdigit() or not low <= int(raw) <= high:
            raise Invalid(f"{name} must be a whole number from {low} to {high}")
        return int(raw)

    game = (args.get("game") or "").strip() or None
    if game is not None and game not in GAMES:
        raise Invalid(f"game must be one of {', '.join(sorted(GAMES))}")
    status = (args.get("status") or "").strip() or None
    if status is not None and status not in statuses:
        raise Invalid(f"status must be one of {', '.join(statuses)}")
    name = (args.get("name") or "").strip()[:80] or None
    return ListFilter(game=game, players=number("players", 2, 6), status=status, bot=number("bot", 1, MAX_ID),
                      name=name, before=number("before", 1, MAX_ID), after=number("after", 1, MAX_ID))


def _page(session: Session, query: Select[Any], column: Any, f: ListFilter, limit: int) -> tuple[list[int], Any, Any]:
    """Ids of one page, newest first, and the cursors of the newer and older pages (None at the ends)."""
    if f.after is not None:
        ids = list(session.scalars(query.where(column > f.after).order_by(column).limit(limit + 1)))
        newer = len(ids) > limit
        ids = sorted(ids[:limit], reverse=True)
        return ids, ids[0] if ids and newer else None, ids[-1] if ids else None
    page = query.where(column < f.before) if f.before is not None else query
    ids = list(session.scalars(page.order_by(column.desc()).limit(limit + 1)))
    older = len(ids) > limit
    ids = ids[:limit]
    newer = f.before is not None and bool(ids) and session.scalar(query.where(column > ids[0]).limit(1)) is not None
    return ids, ids[0] if newer else None, ids[-1] if ids and older else None


def find_bots(session: Session, f: ListFilter, limit: int = PAGE_SIZE) -> dict[str, Any]:
    """Bots, newest first, with each one's rating on its busiest leaderboard (or on ``players``')."""
    query = select(Bot.id)
    if f.game is not None:
        query = query.where(Bot.game == f.game)
    if f.status == "retired":
        query = query.where(Bot.retired_at.is_not(None))
    elif f.status is not None:
        query = query.where(Bot.status == f.status, Bot.retired_at.is_(None))
    if f.name is not None:
        query = query.where(func.lower(Bot.name).contains(f.name.lower(), autoescape=True))
    if f.players is not None:
        query = query.where(Bot.id.in_(select(Rating.bot_id).where(Rating.players == f.players)))
    ids, newer, older = _page(session, query, Bot.id, f, limit)
    rows = {r.id: dict(r._mapping) for r in session.execute(
        select(Bot.id, Bot.name, Bot.game, Bot.status, Bot.version, Bot.retired_at, Bot.created_at,
               Account.name.label("owner")).join(Account, Account.id == Bot.owner_id).where(Bot.id.in_(ids)))}
    ratings: dict[int, dict[str, Any]] = {}
    for r in session.execute(select(Rating.bot_id, Rating.players, Rating.elo, Rating.elo_low, Rating.elo_high,
                                    Rating.games, Rating.rank_low, Rating.rank_high, Rating.provisional)
                             .where(Rating.bot_id.in_(ids))):
        best = ratings.get(r.bot_id)
        wanted = f.players is None or r.players == f.players
        if wanted and (best is None or r.games > best["games"]):
            ratings[r.bot_id] = dict(r._mapping)
    bots = [rows[i] | {"rating": ratings.get(i),
                       "state": "retired" if rows[i]["retired_at"] else rows[i]["status"]} for i in ids if i in rows]
    return {"bots": bots, "newer": newer, "older": older}


def find_tournaments(session: Session, f: ListFilter, limit: int = PAGE_SIZE) -> dict[str, Any]:
    """Tournaments, newest first, with their progress; ``bot``: those the bot sat in."""
    query = select(Tournament.id)
    if f.game is not None:
        query = query.where(Tournament.game == f.game)
    if f.players is not None:
        query = query.where(Tournament.seats == f.players)
    if f.status is not None:
        query = query.where(Tournament.status == f.status)
    if f.bot is not None:
        sat_in = (select(Match.tournament_id).join(MatchSeat, MatchSeat.match_id == Match.id)
                  .where(MatchSeat.bot_id == f.bot, Match.tournament_id.is_not(None)))
        query = query.where(Tournament.id.in_(sat_in))
    ids, newer, older = _page(session, query, Tournament.id, f, limit)
    rows = {t.id: t for t in session.scalars(select(Tournament).where(Tournament.id.in_(ids)))}
    progress = progress_many(session, ids)
    bot_name = bot_names(session, {f.bot}).get(f.bot) if f.bot is not None else None
    tournaments = [{"id": i, "game": rows[i].game, "seats": rows[i].seats, "bots": len(rows[i].bot_ids),
                    "status": rows[i].status, "created_at": rows[i].created_at, "finished_at": rows[i].finished_at,
                    "progress": progress[i]} for i in ids if i in rows]
    return {"tournaments": tournaments, "newer": newer, "older": older, "bot_name": bot_name}


TOURNAMENT_STATES = tuple(s.value for s in TournamentStatus)


def leaderboards(session: Session, game: str | None = None) -> list[dict[str, Any]]:
    """Every leaderboard (game and table size) that has a fit or a ladder, with its leader and its ladder."""
    if game is not None and game not in GAMES:
        raise Invalid(f"game must be one of {', '.join(sorted(GAMES))}")
    boards: dict[tuple[str, int], dict[str, Any]] = {}
    for fit in session.scalars(select(LeaderboardFit)):
        boards[(fit.game, fit.players)] = {"game": fit.game, "players": fit.players, "matches": fit.matches,
                                           "updated_at": fit.updated_at, "ladder": None, "leader": None, "bots": 0}
    for ladder in session.scalars(select(Ladder)):
        entry = boards.setdefault((ladder.game, ladder.players), {
            "game": ladder.game, "players": ladder.players, "matches": 0, "updated_at": None, "leader": None,
            "bots": 0})
        entry["ladder"] = {"id": ladder.id, "status": ladder.status}
    counts = dict(((g, p), n) for g, p, n in session.execute(
        select(Rating.game, Rating.players, func.count()).group_by(Rating.game, Rating.players)))
    leaders = session.execute(
        select(Rating.game, Rating.players, Rating.bot_id, Rating.elo, Bot.name).join(Bot, Bot.id == Rating.bot_id)
        .where(Rating.rank == 1).order_by(Rating.game, Rating.players, Rating.elo.desc())).all()
    for g, p, bot_id, elo, name in leaders:
        entry = boards.get((g, p))
        if entry is not None and entry["leader"] is None:
            entry["leader"] = {"bot_id": bot_id, "name": name, "elo": elo}
    for key, entry in boards.items():
        entry["bots"] = counts.get(key, 0)
        entry["title"] = GAMES[entry["game"]].spec.title if entry["game"] in GAMES else entry["game"]
    return [boards[key] for key in sorted(boards) if game is None or key[0] == game]
