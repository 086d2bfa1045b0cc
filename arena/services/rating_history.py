"""A bot's rating history for its chart: one point per rated match, and the fitted ratings with their band.

What a point is: the fitted Arena Elo (the rating) comes from a refit of the whole leaderboard, which
runs after matches, not for each one (at scale a refit covers many matches), so it is drawn where fits
were made: its value and 95% interval after the bot's n-th rated match (``RatingPoint``, written by
``leaderboards.refit``). Every rated match adds a point of live Elo (``LivePoint``, written here when
the match is published): a quick incremental estimate that moves with each result, so a bot with 9
matches has 9 points. The page says which is which.

Reading is bounded whatever the bot's history: a board with more than ``MAX_POINTS`` matches is read as
``MAX_POINTS`` buckets of consecutive matches (mean, lowest and highest live Elo), summed in the database.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, insert, select
from sqlalchemy.orm import Session

from arena.storage.compiled_plans import write
from arena.storage.db import core
from arena.storage.history_models import LivePoint, RatingPoint
from arena.storage.models import LiveRating, Rating

MAX_POINTS = 300  # live points drawn per board (more matches are bucketed)
MAX_FITS = 150  # fitted points drawn per board (more fits are bucketed, over the whole history)
Point = tuple[int, float, float, float]  # x (the bot's n-th rated match), value, low, high
_INSERT_POINTS = insert(LivePoint.__table__)


def add_live_points(session: Session, game: str,
                    points: list[tuple[int, list[int], dict[int, tuple[float, int]] | None]]) -> None:
    """After the live Elo update of published matches: for each (match id, its seats' bots, ``live``) each
    seat's live Elo and rated-match count, from ``live`` (what ``leaderboards.update_live`` returned after
    that match) or else read from the live ratings. One INSERT for all of them."""
    if len(points) > 1 and any(live is None for _id, _bots, live in points):
        raise ValueError("the live Elo after each of several matches is needed: read back, all would get the last")
    rows = []
    for match_id, bots, live in points:
        players = len(bots)
        if live is not None and all(bot in live for bot in bots):
            values = [(bot, *live[bot]) for bot in bots]
        else:
            session.flush()  # the live Elo rows changed in this transaction
            values = session.execute(select(LiveRating.bot_id, LiveRating.elo, LiveRating.games).where(
                LiveRating.game == game, LiveRating.players == players, LiveRating.bot_id.in_(bots))).all()
        rows += [{"bot_id": bot, "game": game, "players": players, "games": games, "match_id": match_id,
                  "elo": round(elo, 2)} for bot, elo, games in values]
    write(core(session), _INSERT_POINTS, rows)  # Core: the ORM's bulk insert costs more than the statement


def _live(session: Session, bot_id: int, game: str, players: int, matches: int) -> list[Point]:
    """(x, live Elo, lowest, highest) per match, or per bucket of ``step`` consecutive matches."""
    where = (LivePoint.bot_id == bot_id, LivePoint.game == game, LivePoint.players == players)
    step = max(1, -(-matches // MAX_POINTS))
    if step == 1:
        return [(n, e, e, e) for n, e in session.execute(
            select(LivePoint.games, LivePoint.elo).where(*where).order_by(LivePoint.games))]
    bucket = (LivePoint.games - 1) // step
    rows = session.execute(
        select(func.max(LivePoint.games), func.avg(LivePoint.elo), func.min(LivePoint.elo), func.max(LivePoint.elo))
        .where(*where).group_by(bucket).order_by(func.max(LivePoint.games))).all()
    return [(int(n), float(avg), float(lo), float(hi)) for n, avg, lo, hi in rows]


def _fits(session: Session, bot_id: int, game: str, players: int, matches: int) -> list[Point]:
    """(x, fitted Elo, low, high): the last fit of each of at most ``MAX_FITS`` buckets of consecutive
    matches, over the bot's whole history. Regression: the newest 2,000 fits were read and then bucketed,
    so a ladder bot refitted after every match (the maintenance rate) had fits drawn only over its latest
    2,000 matches, a few dozen points at the right edge of the chart."""
    where = (RatingPoint.bot_id == bot_id, RatingPoint.game == game, RatingPoint.players == players,
             RatingPoint.games.is_not(None), RatingPoint.elo_low.is_not(None))
    width = max(1, -(-matches // MAX_FITS))
    last_of_bucket = select(func.max(RatingPoint.id)).where(*where).group_by((RatingPoint.games - 1) // width)
    rows = session.execute(
        select(RatingPoint.games, RatingPoint.elo, RatingPoint.elo_low, RatingPoint.elo_high)
        .where(RatingPoint.id.in_(last_of_bucket)).order_by(RatingPoint.id)).all()
    by_x: dict[int, Point] = {}
    for games, elo, low, high in rows:  # oldest first: a later fit at the same x wins
        by_x[games] = (games, elo, low, high)
    return sorted(by_x.values())


def history(session: Session, bot_id: int) -> list[dict[str, Any]]:
    """Per leaderboard the bot is on: its rated matches, live points, fitted points and current rating."""
    boards = session.execute(select(LiveRating.game, LiveRating.players, LiveRating.games)
                             .where(LiveRating.bot_id == bot_id).order_by(LiveRating.game, LiveRating.players)).all()
    current = {(r.game, r.players): r for r in session.scalars(select(Rating).where(Rating.bot_id == bot_id))}
    out = []
    for game, players, matches in boards:
        fits = _fits(session, bot_id, game, players, matches)
        rating = current.get((game, players))
        if rating is not None and matches:  # the rating as it stands (a later refit may have moved it)
            fits = [p for p in fits if p[0] < matches] + [(matches, rating.elo, rating.elo_low, rating.elo_high)]
        out.append({"game": game, "players": players, "matches": matches,
                    "live": _live(session, bot_id, game, players, matches), "fits": fits,
                    "bucket": max(1, -(-matches // MAX_POINTS))})
    return out
