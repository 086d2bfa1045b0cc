"""Finding matches: filters, newest-first keyset paging, and two bots' head-to-head record.

Paging is by match id (``before``/``after`` a cursor, never OFFSET), so page 2,000 of 100,000 matches
costs what page 1 does: each filter walks an index in id order (``ix_match_seats_bot_match`` for a bot,
``ix_matches_tournament_id``, ``ix_matches_ladder_id``, ``ix_matches_board_id`` for a leaderboard,
``ix_matches_status_id``; the primary key otherwise).

Secrecy: a result filter only ever selects published matches (``publication.PUBLIC``), whatever the
result asked for, so a sealed match is left out of every result list alike and its place in one or
another says nothing of how it went (a sealed seat has no rank yet either).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

from sqlalchemy import Select, and_, case, exists, func, select
from sqlalchemy.orm import Session, aliased

from arena.services.errors import MAX_ID, Invalid, NotFound
from arena.services.page_queries import bot_names, match_rows
from arena.services.publication import PUBLIC
from arena.storage.models import Bot, Ladder, Match, MatchSeat, MatchStatus
from referee.games import GAMES

PAGE_SIZE = 50
RESULTS = {"win": "won", "draw": "shared first / level", "loss": "lost"}  # the bot's, see ``MatchFilter``
STATUSES = tuple(status.value for status in MatchStatus)


@dataclass(frozen=True)
class MatchFilter:
    """What a match list is narrowed to; every field optional. ``result`` is the bot's: with an opponent,
    ahead of it (win), level (draw) or behind (loss); without, alone in first place (win), sharing first
    place (draw) or not first (loss)."""

    game: str | None = None
    players: int | None = None
    bot: int | None = None
    opponent: int | None = None
    tournament: int | None = None
    ladder: int | None = None
    result: str | None = None
    status: str | None = None
    before: int | None = None
    after: int | None = None

    def query_args(self, **changes: Any) -> dict[str, Any]:
        """The filter as URL query arguments (for links to the next and previous pages)."""
        values = asdict(replace(self, **changes))
        return {key: value for key, value in values.items() if value is not None}


def _int(args: Mapping[str, str], name: str, low: int, high: int) -> int | None:
    raw = (args.get(name) or "").strip()
    if not raw:
        return None
    if not raw.isdigit() or not low <= int(raw) <= high:
        raise Invalid(f"{name} must be a whole number from {low} to {high}")
    return int(raw)


def parse_filter(args: Mapping[str, str]) -> MatchFilter:
    """A ``MatchFilter`` from query arguments, refusing what names nothing (422 with a clear message)."""
    game = (args.get("game") or "").strip() or None
    if game is not None and game not in GAMES:
        raise Invalid(f"game must be one of {', '.join(sorted(GAMES))}")
    result = (args.get("result") or "").strip() or None
    if result is not None and result not in RESULTS:
        raise Invalid(f"result must be one of {', '.join(RESULTS)}")
    status = (args.get("status") or "").strip() or None
    if status is not None and status not in STATUSES:
        raise Invalid(f"status must be one of {', '.join(STATUSES)}")
    found = MatchFilter(game=game, players=_int(args, "players", 2, 6), bot=_int(args, "bot", 1, MAX_ID),
                        opponent=_int(args, "opponent", 1, MAX_ID), tournament=_int(args, "tournament", 1, MAX_ID),
                        ladder=_int(args, "ladder", 1, MAX_ID), result=result, status=status,
                        before=_int(args, "before", 1, MAX_ID), after=_int(args, "after", 1, MAX_ID))
    if found.bot is None and found.opponent is not None:
        found = replace(found, bot=found.opponent, opponent=None)  # an opponent alone is just a bot
    if found.result is not None and found.bot is None:
        raise Invalid("a result is a bot's: choose a bot too")
    if found.bot is not None and found.bot == found.opponent:
        raise Invalid("a bot does not play itself: choose another opponent")
    return found


def _id_query(f: MatchFilter) -> tuple[Select[Any], Any]:
    """The ids matching ``f`` (no order, no cursor yet) and the id column to order and page by."""
    if f.bot is None:
        query, id_column, match = select(Match.id), Match.id, Match
    else:
        seat = aliased(MatchSeat, name="me")
        query, id_column = select(seat.match_id).where(seat.bot_id == f.bot), seat.match_id
        match = Match
        needs_match = any(v is not None for v in (f.game, f.players, f.tournament, f.ladder, f.status, f.result))
        if needs_match:
            query = query.join(Match, Match.id == seat.match_id)
        if f.opponent is not None:
            other = aliased(MatchSeat, name="them")
            query = query.join(other, and_(other.match_id == seat.match_id, other.bot_id == f.opponent))
        if f.result is not None:
            query = query.where(Match.status.in_(PUBLIC), seat.rank.is_not(None))
            query = query.where(_result_clause(f.result, seat, other if f.opponent is not None else None))
    if f.game is not None:
        query = query.where(match.game == f.game)
    if f.players is not None:
        query = query.where(match.num_players == f.players)
    if f.tournament is not None:
        query = query.where(match.tournament_id == f.tournament)
    if f.ladder is not None:
        query = query.where(match.ladder_id == f.ladder)
    if f.status is not None:
        query = query.where(match.status == f.status)
    return query, id_column


def _result_clause(result: str, seat: Any, other: Any) -> Any:
    if other is not None:
        return {"win": seat.rank < other.rank, "draw": seat.rank == other.rank, "loss": seat.rank > other.rank}[result]
    rival = aliased(MatchSeat, name="rival")
    shared = exists().where(rival.match_id == seat.match_id, rival.seat != seat.seat, rival.rank == 1)
    return {"win": and_(seat.rank == 1, ~shared), "draw": and_(seat.rank == 1, shared), "loss": seat.rank > 1}[result]


def find_ids(session: Session, f: MatchFilter, limit: int = PAGE_SIZE) -> list[int]:
    """The ids of one page of ``f`` (before its cursor), newest first: for the API's match list."""
    query, id_column = _id_query(f)
    if f.before is not None:
        query = query.where(id_column < f.before)
    return list(session.scalars(query.order_by(id_column.desc()).limit(limit)))


def find_matches(session: Session, f: MatchFilter, limit: int = PAGE_SIZE) -> dict[str, Any]:
    """One page of matches, newest first: ``{"matches", "newer", "older"}`` where ``newer``/``older`` are
    the cursors of the neighbouring pages (None at either end)."""
    query, id_column = _id_query(f)
    if f.after is not None:  # the page just newer than ``after``: walk up, then show newest first
        ids = list(session.scalars(query.where(id_column > f.after).order_by(id_column).limit(limit + 1)))
        more_newer = len(ids) > limit
        ids = sorted(ids[:limit], reverse=True)
        more_older = True
    else:
        if f.before is not None:
            query = query.where(id_column < f.before)
        ids = list(session.scalars(query.order_by(id_column.desc()).limit(limit + 1)))
        more_older = len(ids) > limit
        ids = ids[:limit]
        more_newer = f.before is not None
    if more_newer and ids and f.after is None:  # confirm a newer page exists (the cursor may be the newest)
        newer_query, newer_column = _id_query(f)
        more_newer = session.scalar(newer_query.where(newer_column > ids[0]).limit(1)) is not None
    rows = match_rows(session, ids)
    kinds = dict(session.execute(select(Match.id, Match.ladder_id).where(Match.id.in_(ids))).all()) if ids else {}
    for row in rows:
        row["ladder_id"] = kinds.get(row["id"])
    return {"matches": rows, "newer": ids[0] if ids and more_newer else None,
            "older": ids[-1] if ids and more_older else None}


def head_to_head(session: Session, bot: int, opponent: int) -> dict[str, Any]:
    """Two bots' record over every published match both sat in, per game and table size: the better place
    wins, a shared place is a draw (as in a tournament's cross-table)."""
    if bot == opponent:
        raise Invalid("a bot does not play itself: choose another opponent")
    names = bot_names(session, {bot, opponent})
    for bot_id in (bot, opponent):
        if bot_id not in names:
            raise NotFound(f"no bot {bot_id}")
    me, them = aliased(MatchSeat, name="me"), aliased(MatchSeat, name="them")
    rows = session.execute(
        select(Match.game, Match.num_players, func.count(),
               func.sum(case((me.rank < them.rank, 1), else_=0)), func.sum(case((me.rank == them.rank, 1), else_=0)),
               func.sum(case((me.rank > them.rank, 1), else_=0)), func.max(Match.id))
        .select_from(me).join(them, and_(them.match_id == me.match_id, them.bot_id == opponent))
        .join(Match, Match.id == me.match_id)
        .where(me.bot_id == bot, Match.status == MatchStatus.FINISHED, me.rank.is_not(None), them.rank.is_not(None))
        .group_by(Match.game, Match.num_players).order_by(Match.game, Match.num_players)
    ).all()
    boards = [{"game": game, "title": GAMES[game].spec.title if game in GAMES else game, "players": players,
               "matches": n, "wins": int(w or 0), "draws": int(d or 0),
               "losses": int(lo or 0), "last_match": last} for game, players, n, w, d, lo, last in rows]
    total = {key: sum(b[key] for b in boards) for key in ("matches", "wins", "draws", "losses")}
    games = dict(session.execute(select(Bot.id, Bot.game).where(Bot.id.in_([bot, opponent]))).all())
    return {"bot": {"id": bot, "name": names[bot], "game": games.get(bot)},
            "opponent": {"id": opponent, "name": names[opponent], "game": games.get(opponent)},
            "boards": boards, "total": total,
            "score": round((total["wins"] + 0.5 * total["draws"]) / total["matches"], 4) if total["matches"] else None}


def match_index(session: Session, f: MatchFilter) -> dict[str, Any]:
    """What the match list page shows: one page of matches, the chosen bots' names and, when two bots are
    chosen, their head-to-head record."""
    chosen = {b for b in (f.bot, f.opponent) if b is not None}
    names = bot_names(session, chosen)
    missing = sorted(chosen - set(names))
    if missing:
        raise NotFound(f"no bot {missing[0]}")
    record = head_to_head(session, f.bot, f.opponent) if f.bot is not None and f.opponent is not None else None
    ladder = session.get(Ladder, f.ladder) if f.ladder is not None else None  # the heading names it
    board = {"id": ladder.id, "game": ladder.game, "players": ladder.players} if ladder is not None else None
    return {"listing": find_matches(session, f), "record": record, "names": names, "ladder": board}
