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

from arena.storage.history_models import LivePoint, RatingPoint
from arena.storage.models import LiveRating, Rating

MAX_POINTS = 300  # live points drawn per board (more matches are bucketed)
MAX_FITS = 150  # fitted points drawn per board
FITS_READ = 2000  # newest fitted points read per board
Point = tuple[int, float, float, float]  # x (the bot's n-th rated match), value, low, high


def add_live_points(session: Session, game: str, match_id: int, bots: list[int]) -> None:
    """After the live Elo update of a published match: each seat's live Elo and rated-match count."""
    players = len(bots)
    rows = session.execute(select(LiveRating.bot_id, LiveRating.elo, LiveRating.games).where(
        LiveRating.game == game, LiveRating.players == players, LiveRating.bot_id.in_(bots))).all()
    if rows:
        session.execute(insert(LivePoint), [{"bot_id": bot, "game": game, "players": players, "games": games,
                                             "match_id": match_id, "elo": round(elo, 2)} for bot, elo, games in rows])


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


def _fits(session: Session, bot_id: int, game: str, players: int) -> list[Point]:
    """(x, fitted Elo, low, high) of the newest fits, at most ``MAX_FITS`` (the last of each x bucket)."""
    rows = session.execute(
        select(RatingPoint.games, RatingPoint.elo, RatingPoint.elo_low, RatingPoint.elo_high)
        .where(RatingPoint.bot_id == bot_id, RatingPoint.game == game, RatingPoint.players == players,
               RatingPoint.games.is_not(None), RatingPoint.elo_low.is_not(None))
        .order_by(RatingPoint.id.desc()).limit(FITS_READ)).all()
    by_x: dict[int, Point] = {}
    for games, elo, low, high in reversed(rows):  # oldest first: a later fit at the same x wins
        by_x[games] = (games, elo, low, high)
    points = sorted(by_x.values())
    if len(points) > MAX_FITS:
        width = -(-points[-1][0] // MAX_FITS)
        kept: dict[int, Point] = {}
        for point in points:
            kept[(point[0] - 1) // width] = point
        points = sorted(kept.values())
    return points


def history(session: Session, bot_id: int) -> list[dict[str, Any]]:
    """Per leaderboard the bot is on: its rated matches, live points, fitted points and current rating."""
    boards = session.execute(select(LiveRating.game, LiveRating.players, LiveRating.games)
                             .where(LiveRating.bot_id == bot_id).order_by(LiveRating.game, LiveRating.players)).all()
    current = {(r.game, r.players): r for r in session.scalars(select(Rating).where(Rating.bot_id == bot_id))}
    out = []
    for game, players, matches in boards:
        fits = _fits(session, bot_id, game, players)
        rating = current.get((game, players))
        if rating is not None and matches:  # the rating as it stands (a later refit may have moved it)
            fits = [p for p in fits if p[0] < matches] + [(matches, rating.elo, rating.elo_low, rating.elo_high)]
        out.append({"game": game, "players": players, "matches": matches,
                    "live": _live(session, bot_id, game, players, matches), "fits": fits,
                    "bucket": max(1, -(-matches // MAX_POINTS))})
    return out
