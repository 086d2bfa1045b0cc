"""A bot's rating history, the rating chart's data: its fitted rating after each refit (``RatingPoint``,
written by ``leaderboards.refit``) and its live Elo after each of its rated matches (``LivePoint``,
written in the transaction that publishes the match).

Kept apart from ``models.py`` (same ``Base``, same metadata) so that module stays small.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Float, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from arena.storage.models import Base, utcnow
from arena.storage.types import UtcDateTime


class LivePoint(Base):
    """The bot's live Elo after its ``games``-th rated match of one leaderboard (match ``match_id``)."""

    __tablename__ = "live_points"
    __table_args__ = (Index("ix_live_points_bot", "bot_id", "game", "players", "games"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"))
    game: Mapped[str] = mapped_column(String(60))
    players: Mapped[int] = mapped_column(Integer)
    games: Mapped[int] = mapped_column(Integer)
    match_id: Mapped[int] = mapped_column(Integer)
    elo: Mapped[float] = mapped_column(Float)


class RatingPoint(Base):
    """A bot's fitted rating after a refit, for the rating chart (its per-match points: ``LivePoint``)."""

    __tablename__ = "rating_points"
    __table_args__ = (Index("ix_rating_points_bot", "bot_id", "game", "players", "id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"))
    game: Mapped[str] = mapped_column(String(60))
    players: Mapped[int] = mapped_column(Integer)
    match_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    elo: Mapped[float] = mapped_column(Float)
    live_elo: Mapped[float] = mapped_column(Float)
    elo_low: Mapped[float | None] = mapped_column(Float, nullable=True)  # the fit's 95% interval (0008_find)
    elo_high: Mapped[float | None] = mapped_column(Float, nullable=True)
    games: Mapped[int | None] = mapped_column(Integer, nullable=True)  # the bot's rated matches at the fit
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(timezone=True), default=utcnow)
