"""A bot's live Elo after each of its rated matches: the rating chart's one point per match.

Kept apart from ``models.py`` (same ``Base``, same metadata) so that module stays small. Written in the
transaction that publishes the match (the live Elo recorder's next stage), read by the bot page.
"""

from __future__ import annotations

from sqlalchemy import Float, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from arena.storage.models import Base


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
