"""Leaderboards: one per game and player count. Live Elo moves with each recorded match (in the same
transaction); the Arena Elo fit with its posterior intervals is recomputed from the whole match log of that
one leaderboard after each match and stored, so pages only ever read.

A refit reads its log from the leaderboard's outcome store (``arena.services.outcome_store``), not from
the seat rows, and rebuilds the store first when it disagrees with the finished matches. The fit is
warm-started from the stored ratings, and big leaderboards take the scalable path of
``arena.ratings.leaderboard`` (see there for the intervals and the size thresholds); the
matches of one deal (same tournament or ladder and seed) are given to it as one unit."""

from __future__ import annotations

import random
import time
from collections import defaultdict
from types import SimpleNamespace
from typing import Any

import numpy as np
from sqlalchemy import bindparam, delete, func, insert, select, text
from sqlalchemy.orm import Session

from arena.ratings.leaderboard import LeaderboardRow, refit_leaderboard
from arena.ratings.live import LiveElo
from arena.ratings.outcomes import MatchOutcome
from arena.ratings.packed import PackedLog, from_ids
from arena.ratings.provisional import PROVISIONAL_WIDTH_ELO, is_settled
from arena.services import outcome_store
from arena.services.errors import Invalid, NotFound
from arena.services.ladders import board_state
from arena.storage.db import Database, core
from arena.storage.history_models import RatingPoint
from arena.storage.models import (
    Account,
    BoardFaultRates,
    Bot,
    Ladder,
    LeaderboardFit,
    LiveRating,
    Match,
    MatchSeat,
    MatchStatus,
    Rating,
)
from arena.storage.upsert import upsert
from referee.games import GAMES

BOOTSTRAP_SEED = 20261129  # fixed: the same log always gives the same table


def ranking_kind(game: str) -> str:
    return GAMES[game].spec.ranking


_LIVE = LiveRating.__table__
_LIVE_READ = select(_LIVE.c.bot_id, _LIVE.c.elo, _LIVE.c.games).where(
    _LIVE.c.game == bindparam("game"), _LIVE.c.players == bindparam("players"),
    _LIVE.c.bot_id.in_(bindparam("bots", expanding=True)))


def read_live(session: Session, game: str, players: int, bots: list[int]) -> dict[int, tuple[float, int]]:
    """The live Elo and rated-match count of ``bots`` on one board (those with a row), under the board's lock
    (``lock_board``): what ``update_live`` starts from."""
    lock_board(session, game, players)
    rows = core(session).execute(_LIVE_READ, {"game": game, "players": players, "bots": sorted(set(bots))})
    return {bot: (value, games) for bot, value, games in rows}


def update_live(session: Session, game: str, played: list[tuple[list[int], dict[str, Any]]],
                before: dict[int, tuple[float, int]] | None = None) -> list[dict[int, tuple[float, int]]]:
    """Classic incremental Elo for the moment-to-moment ladder (order-dependent, shown as provisional), for
    the matches of one board ``played`` in this order (their seats' bots and results); returns after each
    match its bots' new live Elo and rated-match counts (the rating chart's points, without a read back).
    One read and one upsert, in Core, however many matches: this runs for every published deal. ``before``:
    the bots' ratings as ``read_live`` read them, when the caller read them first (then only the upsert)."""
    if not played:
        return []
    players = len(played[0][0])
    if before is None:
        before = read_live(session, game, players, [bot for bots, _result in played for bot in bots])
    elo = LiveElo()
    elo.load(before)
    after = []
    for bots, result in played:
        elo.update(MatchOutcome.from_result(bots, result, ranking_kind(game)))
        after.append({bot: (elo.rating(bot), elo.games(bot)) for bot in bots})
    final = {bot: value for one in after for bot, value in one.items()}  # each bot's value after its last match
    upsert(session, LiveRating, [{"game": game, "players": players, "bot_id": bot, "elo": value, "games": games}
                                 for bot, (value, games) in sorted(final.items())],
           ("game", "players", "bot_id"), replace=("elo", "games"))
    return after


def match_log(session: Session, game: str, players: int) -> tuple[list[MatchOutcome], int]:
    """Every finished match of one leaderboard as rating outcomes (with their deals), and the newest match id."""
    kind = ranking_kind(game)
    rows = session.execute(
        select(MatchSeat.match_id, MatchSeat.seat, MatchSeat.bot_id, MatchSeat.rank, Match.tournament_id,
               Match.ladder_id, Match.seed)
        .join(Match, Match.id == MatchSeat.match_id)
        .where(Match.game == game, Match.num_players == players, Match.status == MatchStatus.FINISHED)
        .order_by(MatchSeat.match_id, MatchSeat.seat)
    ).all()
    grouped: dict[int, list[tuple[int, int]]] = defaultdict(list)
    deals: dict[int, tuple[object, ...] | None] = {}
    for match_id, _seat, bot_id, rank, tournament_id, ladder_id, seed in rows:
        grouped[match_id].append((bot_id, rank))
        deals[match_id] = deal_key(tournament_id, ladder_id, seed)
    log = [MatchOutcome(tuple(b for b, _ in seats), tuple(r for _, r in seats), kind, deals[match_id])
           for match_id, seats in grouped.items()]
    return log, max(grouped, default=0)


def deal_key(tournament_id: int | None, ladder_id: int | None, seed: int) -> tuple[object, ...] | None:
    """The deal a match belongs to for the ratings (``publication.deal_of``'s rule): the tournament's or
    ladder's matches with one seed are the rotations of one deal; any other match is a deal of its own."""
    if tournament_id is not None:
        return ("tournament", tournament_id, seed)
    if ladder_id is not None:
        return ("ladder", ladder_id, seed)
    return None


def deal_labels(ids: np.ndarray, deals: np.ndarray) -> np.ndarray:
    """One integer per match of ``ids``, equal for the matches of one deal (``deal_key``'s rule), from the
    outcome store's deals (``outcome_store.pack_deals``: tournament or -1, ladder or -1, seed per match)."""
    tournament, ladder = deals[:, 0] >= 0, (deals[:, 0] < 0) & (deals[:, 1] >= 0)
    keys = np.column_stack([np.where(tournament, 1, np.where(ladder, 2, 0)),
                            np.where(tournament, deals[:, 0], np.where(ladder, deals[:, 1], -1 - ids)),
                            np.where(tournament | ladder, deals[:, 2], 0)])  # own deal: (0, -1 - match id, 0)
    if not len(keys):
        return np.zeros(0, dtype=np.int64)
    order = np.lexsort(keys.T[::-1])  # np.unique(keys, axis=0) sorts the rows as bytes: ten times slower
    ordered = keys[order]
    group = np.concatenate([[0], np.cumsum((ordered[1:] != ordered[:-1]).any(axis=1))])
    out = np.empty(len(keys), dtype=np.int64)
    out[order] = group
    return out


def board_log(db: Database, game: str, players: int
              ) -> tuple[PackedLog, np.ndarray, np.ndarray, int, dict[int, float], tuple[float, float] | None]:
    """The leaderboard's log as arrays, its match ids, the per-seat fields of ``pack_seats`` (M x 4k), how
    many are single rows, the stored Elo of its bots and the last fit's prior spreads (the warm starts). A
    store that disagrees with the matches table (or has blocks without their deals) is rebuilt first."""
    for attempt in range(2):
        with db.session(readonly=True) as session:
            stored = outcome_store.read_outcomes(session, game, players)
            start = dict(session.execute(select(Rating.bot_id, Rating.elo)
                                         .where(Rating.game == game, Rating.players == players)).all())
            kept = session.execute(select(LeaderboardFit.design_spread, LeaderboardFit.spread)
                                   .where(LeaderboardFit.game == game, LeaderboardFit.players == players)).first()
        ids = stored.ids
        consistent = stored.complete and len(ids) == stored.finished and not (
            len(ids) > 1 and (np.diff(ids) == 0).any())
        if consistent or attempt:
            break
        with db.session() as session:
            lock_board(session, game, players)
            outcome_store.rebuild_outcomes(session, game, players)
    seats = stored.seats
    log = from_ids(seats[:, :players], seats[:, players:2 * players], ranking_kind(game),
                   deal_labels(ids, stored.deals))
    spreads = None if kept is None or None in kept else (float(kept[0]), float(kept[1]))
    return log, ids, seats, stored.singles, start, spreads


def refit(db: Database, game: str, players: int) -> int:
    """Recompute one leaderboard from its whole log and store it; returns the matches fitted."""
    started = time.perf_counter()
    log, ids, seats, singles, start, spreads = board_log(db, game, players)
    last_id = int(ids[-1]) if len(ids) else 0
    table, spreads = refit_leaderboard(log, rng=random.Random(BOOTSTRAP_SEED), start=start, spreads=spreads)
    with db.session() as session:
        lock_board(session, game, players)
        fit = session.get(LeaderboardFit, (game, players))
        if fit is not None and (fit.last_match_id, fit.matches) > (last_id, log.matches):
            return fit.matches  # a newer fit got there first (finished matches only ever grow in number)
        _store_table(session, game, players, table)
        _store_fault_rates(session, game, players, log, seats)
        if fit is None:
            fit = LeaderboardFit(game=game, players=players)
            session.add(fit)
        previous_last_id = fit.last_match_id or 0
        fit.matches, fit.last_match_id = log.matches, last_id
        fit.design_spread, fit.spread = spreads if spreads is not None else (None, None)
        fit.duration_ms = round((time.perf_counter() - started) * 1000, 1)
        since = np.searchsorted(ids, previous_last_id, side="right")
        played = np.unique(log.seats[since:]).tolist()
        _add_history(session, game, players, last_id, [log.bots[i] for i in played],
                     {row.bot: (row.elo, row.elo_low, row.elo_high) for row in table})
        if singles >= outcome_store.COMPACT_AT:
            outcome_store.compact_outcomes(session, game, players)
    return log.matches


def _store_table(session: Session, game: str, players: int, table: list[LeaderboardRow]) -> None:
    """Replace the leaderboard's Rating rows (one bulk insert)."""
    session.execute(delete(Rating).where(Rating.game == game, Rating.players == players)
                    .execution_options(synchronize_session=False))
    rows = [{"game": game, "players": players, "bot_id": row.bot, "elo": row.elo, "elo_low": row.elo_low,
             "elo_high": row.elo_high, "rank": row.rank, "rank_low": row.rank_low, "rank_high": row.rank_high,
             "los_next": row.los_next, "games": row.games, "wins": row.wins, "draws": row.draws,
             "losses": row.losses, "provisional": row.provisional} for row in table]
    if rows and session.bind is not None and session.bind.dialect.name == "postgresql":
        _insert_unnest(session, Rating, rows)
    elif rows:
        session.execute(insert(Rating), rows)


def _insert_unnest(session: Session, model: Any, rows: list[dict[str, Any]]) -> None:
    """PostgreSQL: every row in one INSERT ... SELECT FROM unnest(column arrays): one statement of a fixed
    shape instead of a round trip per row (several times faster than executemany: docs/benchmarks.md)."""
    dialect = session.bind.dialect  # type: ignore[union-attr]
    columns = list(rows[0])
    table = model.__table__
    arrays = ", ".join(f"CAST(:c{i} AS {table.c[name].type.compile(dialect)}[])" for i, name in enumerate(columns))
    session.execute(text(f"INSERT INTO {table.name} ({', '.join(columns)}) SELECT * FROM unnest({arrays})"),
                    {f"c{i}": [row[name] for row in rows] for i, name in enumerate(columns)})


_LOCK_BOARD = text("SELECT pg_advisory_xact_lock(hashtext(:key))")


def lock_board(session: Session, game: str, players: int) -> None:
    """Serialise writers of one leaderboard (PostgreSQL advisory lock; SQLite serialises writes anyway).
    Once per transaction: publishing a match takes it, then its live Elo asked again (a statement each)."""
    if session.bind is not None and session.bind.dialect.name == "postgresql":
        connection = core(session)  # (begins the transaction if need be)
        if (game, players) not in _held(session):
            connection.execute(_LOCK_BOARD, {"key": f"board:{game}:{players}"})
            board_locked(session, game, players)


def board_lock_column(game: Any, players: Any) -> Any:
    """``lock_board`` as a column of a PostgreSQL statement whose rows name the board (a match's game and
    player count): a worker seals its match and locks its board in one round trip. The caller then
    tells ``board_locked``. The lock is taken as the statement runs: what a later statement reads of
    the board's matches (a deal's statuses) is read under it."""
    return func.pg_advisory_xact_lock(func.hashtext(func.concat("board:", game, ":", players)))


def board_locked(session: Session, game: str, players: int) -> None:
    """The session's transaction holds the board's lock now (``lock_board`` will not ask again)."""
    _held(session).add((game, players))


def _held(session: Session) -> set[tuple[str, int]]:
    """The boards whose lock the session's current transaction holds (a new transaction holds none)."""
    transaction, held = session.info.get("boards_locked", (None, set()))
    if transaction is not session.get_transaction():
        transaction, held = session.get_transaction(), set()
        session.info["boards_locked"] = (transaction, held)
    return held


def _add_history(session: Session, game: str, players: int, through_id: int, bots: list[int],
                 elo: dict[int, tuple[float, float, float]]) -> None:
    """A fitted point (Elo, 95% interval, the bot's rated matches so far) for every bot that played since
    the previous fit: the rating chart's fitted line and band (``rating_history``)."""
    live = {bot: (value, games) for bot, value, games in session.execute(
        select(LiveRating.bot_id, LiveRating.elo, LiveRating.games).where(
            LiveRating.game == game, LiveRating.players == players, LiveRating.bot_id.in_(bots)))}
    points = [{"bot_id": bot, "game": game, "players": players, "match_id": through_id,
               "elo": round(elo[bot][0], 2), "elo_low": round(elo[bot][1], 2), "elo_high": round(elo[bot][2], 2),
               "live_elo": round(live.get(bot, (1500.0, 0))[0], 2), "games": live.get(bot, (1500.0, 0))[1]}
              for bot in bots if bot in elo]
    if points:
        session.execute(insert(RatingPoint), points)


def stale_boards(session: Session) -> list[tuple[str, int]]:
    """Leaderboards whose stored fit misses a finished match (the reconciler refits them). The count is
    compared too: a match with a lower id can finish after a fit that already holds the newest id."""
    newest = session.execute(select(Match.game, Match.num_players, func.max(Match.id), func.count())
                             .where(Match.status == MatchStatus.FINISHED)
                             .group_by(Match.game, Match.num_players)).all()
    fitted = {(f.game, f.players): (f.last_match_id, f.matches) for f in session.scalars(select(LeaderboardFit))}
    return [(game, players) for game, players, last, count in newest
            if fitted.get((game, players), (0, 0)) < (last, count)]


def player_counts(session: Session, game: str) -> list[int]:
    """The player counts with a board: a fit, or a ladder playing them (its board exists before its first fit; the
    Korean edition's ladder plays 3 players, and its page opened on an empty 2-player board with no way to 3)."""
    fitted = session.scalars(select(LeaderboardFit.players).where(LeaderboardFit.game == game))
    laddered = session.scalars(select(Ladder.players).where(Ladder.game == game))
    return sorted({*fitted, *laddered})


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
    rows = session.execute(  # columns, not Rating objects: ORM instances cost more than the query
        select(Rating.rank, Rating.rank_low, Rating.rank_high, Rating.bot_id, Rating.elo, Rating.elo_low,
               Rating.elo_high, Rating.games, Rating.los_next, Rating.provisional, Bot.name, Account.name)
        .join(Bot, Bot.id == Rating.bot_id).join(Account, Account.id == Bot.owner_id)
        .where(Rating.game == game, Rating.players == players).order_by(Rating.rank, Rating.bot_id)
    ).all()
    live = dict(session.execute(select(LiveRating.bot_id, LiveRating.elo).where(
        LiveRating.game == game, LiveRating.players == players)).all())
    faults = fault_rates(session, game, players)
    fit = session.get(LeaderboardFit, (game, players))
    entries = [{
        "rank": rank, "rank_low": rank_low, "rank_high": rank_high, "bot_id": bot, "name": name, "owner": owner,
        "elo": round(elo, 1), "elo_low": round(low, 1), "elo_high": round(high, 1), "games": games,
        "live_elo": round(live.get(bot, 1500.0), 1), "los_next": None if los is None else round(los, 4),
        "fault_rate": faults.get(bot), "provisional": bool(provisional),
    } for rank, rank_low, rank_high, bot, elo, low, high, games, los, provisional, name, owner in rows]
    return {"game": game, "players": players, "available_players": available, "entries": entries,
            "matches": fit.matches if fit else 0, "ladder": board_state(session, game, players),
            "provisional_count": sum(entry["provisional"] for entry in entries),
            "settled": is_settled([SimpleNamespace(**entry) for entry in entries]),
            "provisional_rule": {"max_interval_elo": PROVISIONAL_WIDTH_ELO},
            "updated_at": fit.updated_at.isoformat() if fit else None}


def fault_rates(session: Session, game: str, players: int) -> dict[int, float]:
    """Faults per decision asked, per bot, over the leaderboard's finished matches, as of its last refit
    (which sums them from the outcome store; summing every seat row here grew with the leaderboard)."""
    stored = session.get(BoardFaultRates, (game, players))
    return {int(bot): rate for bot, rate in stored.rates.items()} if stored is not None else {}


def _store_fault_rates(session: Session, game: str, players: int, log: PackedLog, seats: np.ndarray) -> None:
    """Sum each bot's faults and decisions over the log (seat columns 2k..4k of ``pack_seats``)."""
    n = len(log.bots)
    flat = log.seats.ravel()
    faults = np.bincount(flat, weights=seats[:, 2 * players:3 * players].ravel(), minlength=n)
    decisions = np.bincount(flat, weights=seats[:, 3 * players:].ravel(), minlength=n)
    rates = {str(bot): round(f / d, 4) if d else 0.0
             for bot, f, d in zip(log.bots, faults.tolist(), decisions.tolist(), strict=True)}
    session.merge(BoardFaultRates(game=game, players=players, rates=rates))
