"""Reads for a bot's owner and its page: ladder state, versions, events, the ladders it played on, and
the "My bots" overview (one pass over the account's bots, a few queries whatever their number)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from arena.config import Settings
from arena.domain.ladder_state import BotLadderState, ladder_state
from arena.services import bot_events
from arena.services.bot_owner import effective_capacity
from arena.services.bot_versions import lineage_of, versions
from arena.services.bots import bot_json
from arena.services.ladders import no_table_yet
from arena.storage.models import Account, Bot, Fault, Ladder, LiveRating, Match, MatchSeat, Rating

RECENT_FAULTS = 5


def _main_ratings(session: Session, bot_ids: list[int]) -> dict[int, Rating]:
    """Each bot's row on the leaderboard where it played most (its ladder board in practice)."""
    best: dict[int, Rating] = {}
    if not bot_ids:
        return best
    for rating in session.scalars(select(Rating).where(Rating.bot_id.in_(bot_ids))):
        held = best.get(rating.bot_id)
        if held is None or rating.games > held.games:
            best[rating.bot_id] = rating
    return best


def status(session: Session, bot: Bot) -> BotLadderState:
    return _state(session, bot, _main_ratings(session, [bot.id]).get(bot.id))


def _state(session: Session, bot: Bot, rating: Rating | None,
           no_table: dict[str, str | None] | None = None) -> BotLadderState:
    """The bot's ladder state; a bot that has not played is told why no ladder seats it, if none can
    (``no_table``: what was found for each game already, when many bots are shown)."""
    if rating is not None:
        return ladder_state(bot, rating)
    known = {} if no_table is None else no_table
    if bot.game not in known:
        known[bot.game] = no_table_yet(session, bot)
    return ladder_state(bot, None, known[bot.game])


def rating_json(rating: Rating | None) -> dict[str, Any] | None:
    if rating is None:
        return None
    return {"game": rating.game, "players": rating.players, "elo": round(rating.elo, 1),
            "elo_low": round(rating.elo_low, 1), "elo_high": round(rating.elo_high, 1), "rank": rating.rank,
            "games": rating.games, "provisional": rating.provisional}


def versions_json(session: Session, bot: Bot) -> list[dict[str, Any]]:
    return [{"id": v.id, "name": v.name, "version": v.version, "retired_at": bot_events.iso(v.retired_at),
             "current": v.id == bot.id} for v in versions(session, bot)]


def ladders_played(session: Session, bot: Bot) -> list[dict[str, Any]]:
    """The ladders of the bot's game it has played matches on (one per table size, so a few at most):
    the bot page links to each one's share of the bot's matches. Only the boards it is rated on are
    looked into (a board it never played would walk all its matches to find none there)."""
    boards = select(LiveRating.players).where(LiveRating.bot_id == bot.id, LiveRating.game == bot.game)
    played = (select(MatchSeat.match_id).join(Match, Match.id == MatchSeat.match_id)
              .where(MatchSeat.bot_id == bot.id, Match.ladder_id == Ladder.id).exists())
    rows = session.execute(select(Ladder.id, Ladder.game, Ladder.players)
                           .where(Ladder.game == bot.game, Ladder.players.in_(boards), played)
                           .order_by(Ladder.players))
    return [dict(row._mapping) for row in rows]


def events_json(session: Session, bot: Bot, owner_view: bool, limit: int = 30) -> list[dict[str, Any]]:
    return [bot_events.event_json(e, owner_view) for e in bot_events.events(session, bot.id, limit)]


def bot_detail(session: Session, bot: Bot, viewer: Account | None) -> dict[str, Any]:
    """``GET /api/bots/<id>``: the bot, its ladder state and rating, and its versions."""
    rating = _main_ratings(session, [bot.id]).get(bot.id)
    return bot_json(bot, viewer) | {"ladder": _state(session, bot, rating).to_json(), "rating": rating_json(rating),
                                    "versions": versions_json(session, bot)}


def _recent_faults(session: Session, bot_ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    out: dict[int, list[dict[str, Any]]] = {bot_id: [] for bot_id in bot_ids}
    for bot_id in bot_ids:  # the (bot_id, id) index walked backwards, a few rows each
        for fault in session.scalars(select(Fault).where(Fault.bot_id == bot_id).order_by(Fault.id.desc())
                                     .limit(RECENT_FAULTS)):
            out[bot_id].append({"match_id": fault.match_id, "turn": fault.turn, "path": fault.path,
                                "kind": fault.kind, "message": fault.message, "excerpt": fault.excerpt,
                                "created_at": bot_events.iso(fault.created_at)})
    return out


def owner_bots(session: Session, account: Account, settings: Settings) -> list[dict[str, Any]]:
    """Every bot of the account, newest version of each lineage first, then the versions they replaced."""
    bots = list(session.scalars(select(Bot).where(Bot.owner_id == account.id).order_by(Bot.id).limit(500)))
    ids = [b.id for b in bots]
    ratings, faults = _main_ratings(session, ids), _recent_faults(session, ids)
    newest: dict[int, int] = {}
    for b in bots:
        newest[lineage_of(b)] = max(newest.get(lineage_of(b), 0), b.version)
    rows = []
    no_table: dict[str, str | None] = {}  # by game: one look for all its unrated bots
    for b in bots:
        rating = ratings.get(b.id)
        rows.append(bot_json(b, account) | {
            "ladder": _state(session, b, rating, no_table).to_json(), "rating": rating_json(rating),
            "faults": faults[b.id],
            "newest": b.version == newest[lineage_of(b)], "effective_capacity": effective_capacity(b, settings),
            "max_capacity": settings.ladder_max_capacity})
    rows.sort(key=lambda r: (not r["newest"], r["retired_at"] is not None, r["name"].lower(), -r["version_number"]))
    return rows


def page_sections(session: Session, bot: Bot, owner_view: bool) -> dict[str, Any]:
    """What the bot page's ladder blocks show: state, versions, the ladders it played on, the event log."""
    return {"ladder": status(session, bot).to_json(), "versions": versions_json(session, bot),
            "ladders_played": ladders_played(session, bot), "events": events_json(session, bot, owner_view)}
