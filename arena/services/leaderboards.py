"""Leaderboards: one per game and player count. Live Elo moves with each recorded match (in the same
transaction); the Arena Elo fit with bootstrap intervals is recomputed from the whole match log of that
one leaderboard after each match and stored, so pages only ever read."""

from __future__ import annotations

import random
import time
from collections import defaultdict
from typing import Any

from sqlalchemy import delete, func, select, text
from sqlalchemy.orm import Session

from arena.ratings.leaderboard import leaderboard as fit_leaderboard
from arena.ratings.live import LiveElo
from arena.ratings.outcomes import MatchOutcome
from arena.services.errors import Invalid, NotFound
from arena.storage.db import Database
from arena.storage.models import (
    Account,
    Bot,
    LeaderboardFit,
    LiveRating,
    Match,
    MatchSeat,
    MatchStatus,
    Rating,
    RatingPoint,
)
from referee.games import GAMES

BOOTSTRAP_SEED = 20261129  # fixed: the same log always gives the same table


def ranking_kind(game: str) -> str:
    return GAMES[game].spec.ranking


def update_live(session: Session, game: str, bots: list[int], result: dict[str, Any]) -> None:
    """Classic incremental Elo for the moment-to-moment ladder (order-dependent, shown as provisional)."""
    players = len(bots)
    lock_board(session, game, players)
    rows = {r.bot_id: r for r in session.scalars(select(LiveRating).where(
        LiveRating.game == game, LiveRating.players == players, LiveRating.bot_id.in_(bots)))}
    elo = LiveElo()
    elo.load({bot: (rows[bot].elo, rows[bot].games) for bot in bots if bot in rows})
    elo.update(MatchOutcome.from_result(bots, result, ranking_kind(game)))
    for bot in bots:
        row = rows.get(bot)
        if row is None:
            row = LiveRating(game=game, players=players, bot_id=bot)
            session.add(row)
        row.elo, row.games = elo.rating(bot), elo.games(bot)


def match_log(session: Session, game: str, players: int) -> tuple[list[MatchOutcome], int]:
    """Every finished match of one leaderboard as rating outcomes, and the newest match id."""
    kind = ranking_kind(game)
    rows = session.execute(
        select(MatchSeat.match_id, MatchSeat.seat, MatchSeat.bot_id, MatchSeat.rank)
        .join(Match, Match.id == MatchSeat.match_id)
        .where(Match.game == game, Match.num_players == players, Match.status == MatchStatus.FINISHED)
        .order_by(MatchSeat.match_id, MatchSeat.seat)
    ).all()
    grouped: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for match_id, _seat, bot_id, rank in rows:
        grouped[match_id].append((bot_id, rank))
    log = [MatchOutcome(tuple(b for b, _ in seats), tuple(r for _, r in seats), kind)
           for seats in grouped.values()]
    return log, max(grouped, default=0)


def refit(db: Database, game: str, players: int) -> int:
    """Recompute one leaderboard from its whole log and store it; returns the matches fitted."""
    started = time.perf_counter()
    with db.session() as session:
        log, last_id = match_log(session, game, players)
    table = fit_leaderboard(log, rng=random.Random(BOOTSTRAP_SEED)) if log else []
    with db.session() as session:
        lock_board(session, game, players)
        fit = session.get(LeaderboardFit, (game, players))
        if fit is not None and fit.last_match_id > last_id:
            return fit.matches  # a newer fit got there first
        session.execute(delete(Rating).where(Rating.game == game, Rating.players == players))
        for row in table:
            session.add(Rating(game=game, players=players, bot_id=row.bot, elo=row.elo, elo_low=row.elo_low,
                               elo_high=row.elo_high, rank=row.rank, rank_low=row.rank_low, rank_high=row.rank_high,
                               los_next=row.los_next, games=row.games, wins=row.wins, draws=row.draws,
                               losses=row.losses))
        if fit is None:
            fit = LeaderboardFit(game=game, players=players)
            session.add(fit)
        previous_last_id = fit.last_match_id or 0
        fit.matches, fit.last_match_id = len(log), last_id
        fit.duration_ms = round((time.perf_counter() - started) * 1000, 1)
        _add_history(session, game, players, previous_last_id, last_id, {row.bot: row.elo for row in table})
    return len(log)


def lock_board(session: Session, game: str, players: int) -> None:
    """Serialise writers of one leaderboard (PostgreSQL advisory lock; SQLite serialises writes anyway)."""
    if session.bind is not None and session.bind.dialect.name == "postgresql":
        session.execute(text("SELECT pg_advisory_xact_lock(hashtext(:key))"), {"key": f"board:{game}:{players}"})


def _add_history(session: Session, game: str, players: int, after_id: int, through_id: int,
                 elo: dict[int, float]) -> None:
    """A rating-history point for every bot that played since the previous fit."""
    bots = sorted(set(session.scalars(
        select(MatchSeat.bot_id).join(Match, Match.id == MatchSeat.match_id)
        .where(Match.game == game, Match.num_players == players, Match.status == MatchStatus.FINISHED,
               Match.id > after_id, Match.id <= through_id))))
    live = dict(session.execute(select(LiveRating.bot_id, LiveRating.elo).where(
        LiveRating.game == game, LiveRating.players == players, LiveRating.bot_id.in_(bots))).all())
    for bot in bots:
        if bot in elo:
            session.add(RatingPoint(bot_id=bot, game=game, players=players, match_id=through_id,
                                    elo=round(elo[bot], 2), live_elo=round(live.get(bot, 1500.0), 2)))


def stale_boards(session: Session) -> list[tuple[str, int]]:
    """Leaderboards whose stored fit misses a finished match (the reconciler refits them)."""
    newest = session.execute(select(Match.game, Match.num_players, func.max(Match.id))
                             .where(Match.status == MatchStatus.FINISHED)
                             .group_by(Match.game, Match.num_players)).all()
    fitted = {(f.game, f.players): f.last_match_id for f in session.scalars(select(LeaderboardFit))}
    return [(game, players) for game, players, last in newest if fitted.get((game, players), 0) < last]


def player_counts(session: Session, game: str) -> list[int]:
    return sorted(set(session.scalars(select(LeaderboardFit.players).where(LeaderboardFit.game == game))))


def leaderboard(session: Session, game: str, players: int | None = None) -> dict[str, Any]:
    """The stored table of one leaderboard, ready for the API and the pages."""
    if game not in GAMES:
        raise NotFound(f"no game {game!r}")
    available = player_counts(session, game)
    spec = GAMES[game].spec
    if players is None:
        players = available[0] if available else spec.min_players
    if not spec.min_players <= players <= spec.max_players:
        raise Invalid(f"{game} is played by {spec.min_players}-{spec.max_players} players")
    rows = session.execute(
        select(Rating, Bot.name, Account.name)
        .join(Bot, Bot.id == Rating.bot_id).join(Account, Account.id == Bot.owner_id)
        .where(Rating.game == game, Rating.players == players).order_by(Rating.rank, Rating.bot_id)
    ).all()
    live = dict(session.execute(select(LiveRating.bot_id, LiveRating.elo).where(
        LiveRating.game == game, LiveRating.players == players)).all())
    faults = fault_rates(session, game, players)
    fit = session.get(LeaderboardFit, (game, players))
    entries = [{
        "rank": r.rank, "rank_low": r.rank_low, "rank_high": r.rank_high, "bot_id": r.bot_id, "name": name,
        "owner": owner, "elo": round(r.elo, 1), "elo_low": round(r.elo_low, 1), "elo_high": round(r.elo_high, 1),
        "games": r.games, "live_elo": round(live.get(r.bot_id, 1500.0), 1),
        "los_next": None if r.los_next is None else round(r.los_next, 4), "fault_rate": faults.get(r.bot_id),
    } for r, name, owner in rows]
    return {"game": game, "players": players, "available_players": available, "entries": entries,
            "matches": fit.matches if fit else 0,
            "updated_at": fit.updated_at.isoformat() if fit else None}


def fault_rates(session: Session, game: str, players: int) -> dict[int, float]:
    """Faults per decision asked, per bot, over the leaderboard's finished matches."""
    rows = session.execute(
        select(MatchSeat.bot_id, func.sum(MatchSeat.faults), func.sum(MatchSeat.decisions))
        .join(Match, Match.id == MatchSeat.match_id)
        .where(Match.game == game, Match.num_players == players, Match.status == MatchStatus.FINISHED)
        .group_by(MatchSeat.bot_id)
    ).all()
    return {bot: round((f or 0) / d, 4) if d else 0.0 for bot, f, d in rows}
