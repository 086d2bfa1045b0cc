"""Durable records: accounts, bots, tournaments, matches and what happened in them.

Status values are ``str`` enums; replays are stored gzip-compressed; what a page lists is indexed for it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy import true as sa_true
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from arena.storage.types import UtcDateTime as DateTime  # aware UTC datetimes on every database


def utcnow() -> datetime:
    return datetime.now(UTC)


class BotStatus(StrEnum):
    ACTIVE = "active"
    DISABLED = "disabled"


class LadderStatus(StrEnum):
    RUNNING = "running"
    PAUSED = "paused"  # by an organizer: schedules nothing new, lets what is in flight finish


class PausedBy(StrEnum):
    """Who took a bot off the ladder (``Bot.paused_by``); only the owner's pause waits for the owner."""

    OWNER = "owner"
    PROBATION = "probation"  # failed health checks or too many faults: re-checked on a back-off
    NEW_SECRET = "new_secret"  # given a signing secret: waits for its restart (``bots.hold_for_new_secret``)


class Deals(StrEnum):
    DUPLICATE = "duplicate"  # a table's seat rotations share one deal: seat and deal luck cancel out
    INDEPENDENT = "independent"  # every match its own deal: no bot ever sees a deal it plays again


class TournamentStatus(StrEnum):
    RUNNING = "running"
    FINISHED = "finished"
    CANCELLED = "cancelled"


class MatchStatus(StrEnum):
    SCHEDULED = "scheduled"  # a ladder table's rotation owed but held back until its bots have capacity
    QUEUED = "queued"
    RUNNING = "running"
    SEALED = "sealed"  # played, but another match of its deal is still open: nothing of it is shown yet
    FINISHED = "finished"  # played and published (its whole deal is over)
    CANCELLED = "cancelled"
    ERROR = "error"  # the match could not be set up (a bug or a bad parameter): never retried
    VOID = "void"  # every seat forfeited before playing: recorded (reason in ``error``), never rated


class Base(DeclarativeBase):
    type_annotation_map: ClassVar = {dict[str, Any]: JSON, list[Any]: JSON}


class Account(Base):
    __tablename__ = "accounts"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(80), unique=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True, index=True)
    is_admin: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    bots: Mapped[list[Bot]] = relationship(back_populates="owner")


class WebSession(Base):
    """A browser signed in to the pages. Its cookie carries only a random key and this row only the key's
    SHA-256, so signing out (deleting the row) ends every copy of the cookie, and the database alone
    gives no usable cookie."""

    __tablename__ = "web_sessions"

    key_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)


class Bot(Base):
    __tablename__ = "bots"
    __table_args__ = (UniqueConstraint("owner_id", "name", name="uq_bot_owner_name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), index=True)
    name: Mapped[str] = mapped_column(String(80))
    url: Mapped[str] = mapped_column(String(2000))
    game: Mapped[str] = mapped_column(String(60), index=True)
    secret: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(20), default=BotStatus.ACTIVE)
    info: Mapped[dict[str, Any]] = mapped_column(default=dict)  # what GET / answered
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, onupdate=utcnow)
    # Versions: every version is its own bot (own leaderboard entry, starts provisional); ``lineage_id``
    # is the first version's id (None on the first version itself), ``version`` counts from 1.
    # (No foreign key on it, nor on ``Match.ladder_id``: SQLite adds such a key only by rebuilding the
    # table, which the keys pointing at bots and matches forbid on a database with rows.)
    lineage_id: Mapped[int | None] = mapped_column(Integer, nullable=True, index=True)
    version: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    retired_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # Ladder: how many matches the bot may play at once (owner's choice, capped by the arena), and why it
    # is off the ladder (None: on it). Probation re-checks it at ``recheck_at``, backing off by strikes.
    capacity: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    paused_by: Mapped[str | None] = mapped_column(String(20), nullable=True)
    paused_reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    recheck_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    strikes: Mapped[int] = mapped_column(Integer, default=0, server_default="0")

    owner: Mapped[Account] = relationship(back_populates="bots")


class BotEvent(Base):
    """Something that happened to a bot outside its matches, kept for its page: URL moved, paused,
    resumed, put on or off probation, new version published, retired."""

    __tablename__ = "bot_events"
    __table_args__ = (Index("ix_bot_events_bot", "bot_id", "id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"))
    kind: Mapped[str] = mapped_column(String(30))
    detail: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Ladder(Base):
    """A continuous rated ladder for one leaderboard (game + player count): the scheduler keeps choosing
    tables among the game's active bots. The database is the truth about what it scheduled; ``settings``
    holds an organizer's tuning (overrides of the ``ARENA_LADDER_*`` defaults)."""

    __tablename__ = "ladders"
    __table_args__ = (UniqueConstraint("game", "players", name="uq_ladder_board"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    game: Mapped[str] = mapped_column(String(60))
    players: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(20), default=LadderStatus.RUNNING)
    paused_reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    time_limit_ms: Mapped[int] = mapped_column(Integer)
    params: Mapped[dict[str, Any]] = mapped_column(default=dict)
    settings: Mapped[dict[str, Any]] = mapped_column(default=dict)
    tables: Mapped[int] = mapped_column(Integer, default=0)  # tables scheduled so far (names the next deal)
    settled_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    last_scheduled_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Tournament(Base):
    __tablename__ = "tournaments"

    id: Mapped[int] = mapped_column(primary_key=True)
    game: Mapped[str] = mapped_column(String(60), index=True)
    seats: Mapped[int] = mapped_column(Integer)
    cycles: Mapped[int] = mapped_column(Integer, default=1)
    time_limit_ms: Mapped[int] = mapped_column(Integer)
    seed: Mapped[int] = mapped_column(BigInteger)
    deals: Mapped[str] = mapped_column(String(20), default=Deals.DUPLICATE, server_default=Deals.DUPLICATE)
    params: Mapped[dict[str, Any]] = mapped_column(default=dict)
    bot_ids: Mapped[list[Any]] = mapped_column(default=list)
    status: Mapped[str] = mapped_column(String(20), default=TournamentStatus.RUNNING, index=True)
    total: Mapped[int] = mapped_column(Integer, default=0)
    created_by: Mapped[int] = mapped_column(ForeignKey("accounts.id"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class Match(Base):
    __tablename__ = "matches"
    __table_args__ = (
        Index("ix_matches_tournament_status", "tournament_id", "status"),
        Index("ix_matches_status_lease", "status", "lease_until"),
        Index("ix_matches_board_finished", "game", "num_players", "status", "finished_at"),
        Index("ix_matches_deal", "tournament_id", "seed", "status"),
        Index("ix_matches_ladder_deal", "ladder_id", "seed", "status"),
        Index("ix_matches_ladder_table", "ladder_id", "table_index"),  # a table's rotations (their deals may differ)
        Index("ix_matches_tournament_id", "tournament_id", "id"), Index("ix_matches_ladder_id", "ladder_id", "id"),
        Index("ix_matches_board_id", "game", "num_players", "id"), Index("ix_matches_status_id", "status", "id"),
        Index("ix_matches_ladder_created", "ladder_id", "created_at"),  # the tick's last-hour count
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    tournament_id: Mapped[int | None] = mapped_column(ForeignKey("tournaments.id"), nullable=True)
    ladder_id: Mapped[int | None] = mapped_column(Integer, nullable=True)  # None: not a ladder match
    game: Mapped[str] = mapped_column(String(60))
    num_players: Mapped[int] = mapped_column(Integer)
    seed: Mapped[int] = mapped_column(BigInteger)
    params: Mapped[dict[str, Any]] = mapped_column(default=dict)
    time_limit_ms: Mapped[int] = mapped_column(Integer)
    table_index: Mapped[int] = mapped_column(Integer, default=0)
    rotation: Mapped[int] = mapped_column(Integer, default=0)
    status: Mapped[str] = mapped_column(String(20), default=MatchStatus.QUEUED)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    lease_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    worker: Mapped[str | None] = mapped_column(String(200), nullable=True)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    replay_gz: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    steps: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)

    seats: Mapped[list[MatchSeat]] = relationship(back_populates="match", order_by="MatchSeat.seat")


class MatchSeat(Base):
    """Who sat where and how it went: the row every bot page and leaderboard query reads."""

    __tablename__ = "match_seats"
    __table_args__ = (Index("ix_match_seats_bot_match", "bot_id", "match_id"),)

    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id"), primary_key=True)
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"))
    rank: Mapped[int | None] = mapped_column(Integer, nullable=True)
    score: Mapped[float | None] = mapped_column(Float, nullable=True)
    forfeited: Mapped[bool] = mapped_column(Boolean, default=False)
    decisions: Mapped[int] = mapped_column(Integer, default=0)
    faults: Mapped[int] = mapped_column(Integer, default=0)
    latency_sum_ms: Mapped[float] = mapped_column(Float, default=0.0)
    latency_max_ms: Mapped[float] = mapped_column(Float, default=0.0)
    latency_hist: Mapped[list[Any]] = mapped_column(default=list)  # counts per LATENCY_BUCKETS_MS bucket

    match: Mapped[Match] = relationship(back_populates="seats")


class Fault(Base):
    """One recorded bot fault (per decision or per /start, /end call)."""

    __tablename__ = "faults"
    __table_args__ = (Index("ix_faults_bot_id", "bot_id", "id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id"), index=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"))
    seat: Mapped[int] = mapped_column(Integer)
    turn: Mapped[int] = mapped_column(Integer)
    path: Mapped[str] = mapped_column(String(20))
    kind: Mapped[str] = mapped_column(String(30))
    message: Mapped[str] = mapped_column(Text)
    excerpt: Mapped[str] = mapped_column(Text, default="")
    latency_ms: Mapped[float] = mapped_column(Float, default=0.0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Rating(Base):
    """The stored fit of one leaderboard (game + player count): pages read this, never fit."""

    __tablename__ = "ratings"
    __table_args__ = (Index("ix_ratings_board", "game", "players", "rank"),)

    game: Mapped[str] = mapped_column(String(60), primary_key=True)
    players: Mapped[int] = mapped_column(Integer, primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), primary_key=True)
    elo: Mapped[float] = mapped_column(Float, default=1500.0)
    elo_low: Mapped[float] = mapped_column(Float, default=1500.0)
    elo_high: Mapped[float] = mapped_column(Float, default=1500.0)
    rank: Mapped[int] = mapped_column(Integer, default=0)
    rank_low: Mapped[int] = mapped_column(Integer, default=0)
    rank_high: Mapped[int] = mapped_column(Integer, default=0)
    los_next: Mapped[float | None] = mapped_column(Float, nullable=True)
    provisional: Mapped[bool] = mapped_column(Boolean, default=True, server_default=sa_true())
    games: Mapped[int] = mapped_column(Integer, default=0)
    wins: Mapped[float] = mapped_column(Float, default=0.0)
    draws: Mapped[float] = mapped_column(Float, default=0.0)
    losses: Mapped[float] = mapped_column(Float, default=0.0)


class LeaderboardFit(Base):
    """When a leaderboard was last fitted and over how many matches (a slower, older fit never
    overwrites a newer one), and the prior's fitted spread (log tau^2, logits: the untempered search's,
    read only for the design effect, and the table's), where the next refit's search of it starts."""

    __tablename__ = "leaderboard_fits"

    game: Mapped[str] = mapped_column(String(60), primary_key=True)
    players: Mapped[int] = mapped_column(Integer, primary_key=True)
    matches: Mapped[int] = mapped_column(Integer, default=0)
    last_match_id: Mapped[int] = mapped_column(Integer, default=0)
    duration_ms: Mapped[float] = mapped_column(Float, default=0.0)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, onupdate=utcnow)
    design_spread: Mapped[float | None] = mapped_column(Float, nullable=True)
    spread: Mapped[float | None] = mapped_column(Float, nullable=True)


class BoardOutcome(Base):
    """One finished match as its leaderboard's refit reads it, written in the transaction that records the
    match: the seats' bot ids, ranks, faults and decisions, little-endian int32 (``outcome_store.pack_seats``). A refit
    packs these rows into ``BoardOutcomeBlock`` rows once there are enough of them."""

    __tablename__ = "board_outcomes"

    game: Mapped[str] = mapped_column(String(60), primary_key=True)
    players: Mapped[int] = mapped_column(Integer, primary_key=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id"), primary_key=True)
    seats: Mapped[bytes] = mapped_column(LargeBinary)


class BoardOutcomeBlock(Base):
    """Up to a few thousand finished matches of one leaderboard in one row, so a refit reads its whole log
    as a few dozen rows of one primary-key range (never another leaderboard's): ``match_ids`` int32 per
    match, ``seats`` as in ``BoardOutcome`` one match after the other, in the same order, and ``deals``
    (``outcome_store.pack_deals``: tournament, ladder, seed) in that order too."""

    __tablename__ = "board_outcome_blocks"

    game: Mapped[str] = mapped_column(String(60), primary_key=True)
    players: Mapped[int] = mapped_column(Integer, primary_key=True)
    last_match_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    matches: Mapped[int] = mapped_column(Integer)
    match_ids: Mapped[bytes] = mapped_column(LargeBinary)
    seats: Mapped[bytes] = mapped_column(LargeBinary)
    deals: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)


class BoardFaultRates(Base):
    """Each bot's faults per decision asked over one leaderboard's matches, summed by its last refit from
    the outcome store (``{bot id: rate}``): the leaderboard reads one row instead of every seat row."""

    __tablename__ = "board_fault_rates"

    game: Mapped[str] = mapped_column(String(60), primary_key=True)
    players: Mapped[int] = mapped_column(Integer, primary_key=True)
    rates: Mapped[dict[str, Any]] = mapped_column(default=dict)


class TournamentScore(Base):
    """A bot's sums over its finished matches in one tournament, added to in the transaction that records
    each match (so exactly once): a tournament page reads one row per bot, not every seat row."""

    __tablename__ = "tournament_scores"

    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"), primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), primary_key=True)
    matches: Mapped[int] = mapped_column(Integer, default=0)
    wins: Mapped[int] = mapped_column(Integer, default=0)
    rank_sum: Mapped[int] = mapped_column(Integer, default=0)
    score_sum: Mapped[float] = mapped_column(Float, default=0.0)
    forfeits: Mapped[int] = mapped_column(Integer, default=0)
    faults: Mapped[int] = mapped_column(Integer, default=0)


class TournamentPair(Base):
    """One cell of a tournament's cross-table (bot against other), kept like ``TournamentScore``."""

    __tablename__ = "tournament_pairs"

    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"), primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), primary_key=True)
    other_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), primary_key=True)
    wins: Mapped[int] = mapped_column(Integer, default=0)
    draws: Mapped[int] = mapped_column(Integer, default=0)
    losses: Mapped[int] = mapped_column(Integer, default=0)


class LiveRating(Base):
    """Incremental Elo, updated in the same transaction that records a match (so exactly once)."""

    __tablename__ = "live_ratings"

    game: Mapped[str] = mapped_column(String(60), primary_key=True)
    players: Mapped[int] = mapped_column(Integer, primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), primary_key=True)
    elo: Mapped[float] = mapped_column(Float, default=1500.0)
    games: Mapped[int] = mapped_column(Integer, default=0)


class MetricCounter(Base):
    """Monotonic counters for /metrics, incremented in the same transaction that records a match (so a
    match is counted exactly once, whichever web process is scraped)."""

    __tablename__ = "metric_counters"

    name: Mapped[str] = mapped_column(String(80), primary_key=True)
    labels: Mapped[str] = mapped_column(String(200), primary_key=True, default="")
    value: Mapped[float] = mapped_column(Float, default=0.0)
