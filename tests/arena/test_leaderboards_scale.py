"""Refits from the outcome store, on SQLite and PostgreSQL: equal to a fresh fit of the seat rows, blind to
other leaderboards, rebuilt when matches bypass ``record``, compacted into blocks, never stale by a late match."""

from __future__ import annotations

import importlib
import random
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from sqlalchemy import event, func, select, update

from arena.ratings.leaderboard import leaderboard as fresh_table
from arena.services import outcome_store
from arena.services.accounts import hash_token
from arena.services.leaderboards import BOOTSTRAP_SEED, fault_rates, match_log, refit, stale_boards
from arena.services.matches import record
from arena.storage.db import Database
from arena.storage.models import (
    Account,
    BoardOutcome,
    BoardOutcomeBlock,
    Bot,
    Match,
    MatchSeat,
    MatchStatus,
    Rating,
)

board_module = importlib.import_module("arena.ratings.leaderboard")  # the package exports a function of that name
RANKED_BOARD = ("pajarracos", 4)
ONE_LOSER_BOARD = ("piranha-pedro", 2)
BOTS = 14


def _world(db: Database) -> dict[str, list[int]]:
    """An owner and BOTS bots for each of the two games."""
    with db.session() as session:
        session.add(Account(id=1, name="owner", token_hash=hash_token("arena_test_owner")))
        session.flush()
        ids: dict[str, list[int]] = {}
        for offset, game in enumerate((RANKED_BOARD[0], ONE_LOSER_BOARD[0])):
            ids[game] = list(range(1 + offset * BOTS, 1 + (offset + 1) * BOTS))
            for bot in ids[game]:
                session.add(Bot(id=bot, owner_id=1, name=f"bot{bot}", url="http://127.0.0.1:9", game=game,
                                secret="s" * 16))
    return ids


def _queue(db: Database, game: str, table: list[int]) -> int:
    with db.session() as session:
        match = Match(game=game, num_players=len(table), seed=1, params={}, time_limit_ms=1000, status="running",
                      attempts=1, worker="test")
        session.add(match)
        session.flush()
        for seat, bot in enumerate(table):
            session.add(MatchSeat(match_id=match.id, seat=seat, bot_id=bot))
        return match.id


def _ranks(game: str, table: list[int], rng: random.Random) -> list[int]:
    if game == ONE_LOSER_BOARD[0]:
        loser = rng.choice(table[:1] * 3 + table)  # the first seat loses more often
        return [len(table) if bot == loser else 1 for bot in table]
    order = sorted(table, key=lambda bot: rng.expovariate(1.0 + bot % 5))
    return [order.index(bot) + 1 for bot in table]


def _record(db: Database, match_id: int, game: str, ranks: list[int], rng: random.Random) -> None:
    """Through ``matches.record``, with decisions and now and then a fault (for the fault rates)."""
    seats = range(len(ranks))
    steps = [{"turn": t, "decisions": [{"seat": s, "latency_ms": 1.0} for s in seats]} for t in range(1, 4)]
    faults = [{"seat": s, "turn": 1, "path": "/act", "kind": "timeout", "message": "late", "excerpt": "",
               "latency_ms": 5.0} for s in seats if rng.random() < 0.15]
    result = {"ranks": ranks, "scores": [float(len(ranks) - r) for r in ranks], "game_ranks": ranks,
              "forfeited": []}
    assert record(db, match_id, {"game": game, "steps": steps, "faults": faults, "result": result})


def _play(db: Database, ids: dict[str, list[int]], board: tuple[str, int], count: int, seed: int) -> list[int]:
    rng = random.Random(seed)
    game, players = board
    played = []
    for _ in range(count):
        table = rng.sample(ids[game], players)
        match_id = _queue(db, game, table)
        _record(db, match_id, game, _ranks(game, table, rng), rng)
        played.append(match_id)
    return played


def _stored(db: Database, board: tuple[str, int]) -> dict[int, Rating]:
    with db.session(readonly=True) as session:
        return {r.bot_id: r for r in session.scalars(select(Rating).where(Rating.game == board[0],
                                                                          Rating.players == board[1]))}


def _assert_equals_a_fresh_fit(db: Database, board: tuple[str, int], tolerance: float) -> None:
    """The stored table against a cold fit of the log read from the seat rows (the pre-store path)."""
    with db.session(readonly=True) as session:
        log, _last = match_log(session, *board)
        rows = session.execute(
            select(MatchSeat.bot_id, func.sum(MatchSeat.faults), func.sum(MatchSeat.decisions))
            .join(Match, Match.id == MatchSeat.match_id)
            .where(Match.game == board[0], Match.num_players == board[1], Match.status == MatchStatus.FINISHED)
            .group_by(MatchSeat.bot_id)).all()
        old_rates = {bot: round((f or 0) / d, 4) if d else 0.0 for bot, f, d in rows}
        assert fault_rates(session, *board) == old_rates
    stored = _stored(db, board)
    fresh = fresh_table(log, rng=random.Random(BOOTSTRAP_SEED))
    assert {row.bot for row in fresh} == set(stored)
    for row in fresh:
        mine = stored[row.bot]
        assert (mine.rank, mine.rank_low, mine.rank_high, mine.games) == (row.rank, row.rank_low, row.rank_high,
                                                                          row.games)
        assert (mine.wins, mine.draws, mine.losses) == (row.wins, row.draws, row.losses)
        assert abs(mine.elo - row.elo) < 1e-6
        assert abs(mine.elo_low - row.elo_low) < tolerance and abs(mine.elo_high - row.elo_high) < tolerance


@contextmanager
def statements(db: Database) -> Iterator[list[tuple[str, object]]]:
    seen: list[tuple[str, object]] = []

    def log(_conn, _cursor, statement, parameters, _context, _many) -> None:  # type: ignore[no-untyped-def]
        seen.append((statement, parameters))

    event.listen(db.engine, "before_cursor_execute", log)
    try:
        yield seen
    finally:
        event.remove(db.engine, "before_cursor_execute", log)


@pytest.mark.parametrize("path", ["exact", "one_step"])
def test_a_refit_after_recorded_matches_equals_a_fresh_fit_of_the_seat_rows(database, monkeypatch, path) -> None:
    """Matches recorded one by one, refitted as the worker does; the one-step path is forced by lowering its
    threshold (a warm start from the previous fit must not show in the table)."""
    if path == "one_step":
        monkeypatch.setattr(board_module, "EXACT_MAX_BOTS", 4)
    ids = _world(database)
    for seed in range(3):
        _play(database, ids, RANKED_BOARD, 40, seed)
        refit(database, *RANKED_BOARD)
    _assert_equals_a_fresh_fit(database, RANKED_BOARD, 1e-6 if path == "exact" else 1e-3)


def test_a_refit_touches_only_its_own_leaderboard(database, monkeypatch) -> None:
    """Every statement of a refit names its own leaderboard; another leaderboard's store, even unreadable,
    and its stored table are left alone."""
    monkeypatch.setattr(board_module, "EXACT_MAX_BOTS", 4)
    ids = _world(database)
    _play(database, ids, RANKED_BOARD, 60, 1)
    _play(database, ids, ONE_LOSER_BOARD, 60, 2)
    for board in (RANKED_BOARD, ONE_LOSER_BOARD):
        refit(database, *board)
    before = {bot: (r.elo, r.elo_low, r.elo_high, r.rank) for bot, r in _stored(database, ONE_LOSER_BOARD).items()}
    with database.session() as session:  # another leaderboard's store turned to garbage
        for table in (BoardOutcome, BoardOutcomeBlock):
            session.execute(update(table).where(table.game == ONE_LOSER_BOARD[0]).values(seats=b"\xff"))
    _play(database, ids, RANKED_BOARD, 5, 3)
    with statements(database) as seen:
        refit(database, *RANKED_BOARD)
    reads = [(sql, params) for sql, params in seen if sql.lstrip().upper().startswith(("SELECT", "DELETE", "UPDATE"))
             and any(name in sql for name in ("matches", "board_", "ratings", "match_seats", "leaderboard_fits"))]
    assert reads
    for sql, params in reads:
        values = list(params.values()) if isinstance(params, dict) else list(params or [])
        assert RANKED_BOARD[0] in values and ONE_LOSER_BOARD[0] not in values, sql
    after = {bot: (r.elo, r.elo_low, r.elo_high, r.rank) for bot, r in _stored(database, ONE_LOSER_BOARD).items()}
    assert after == before
    _assert_equals_a_fresh_fit(database, RANKED_BOARD, 1e-3)


def test_matches_that_bypassed_record_are_read_from_seat_rows_then_kept_in_blocks(database, monkeypatch) -> None:
    """Finished matches with no store rows (bulk loads, matches older than the store) make the refit rebuild
    the store; later single rows are packed into blocks once there are COMPACT_AT of them."""
    monkeypatch.setattr(outcome_store, "BLOCK", 16)
    monkeypatch.setattr(outcome_store, "COMPACT_AT", 10)
    ids = _world(database)
    _play(database, ids, ONE_LOSER_BOARD, 40, 4)
    with database.session() as session:
        session.execute(BoardOutcome.__table__.delete())
    refit(database, *ONE_LOSER_BOARD)
    _assert_equals_a_fresh_fit(database, ONE_LOSER_BOARD, 1e-6)
    with database.session(readonly=True) as session:
        assert session.scalar(select(func.count()).select_from(BoardOutcome)) == 0
        assert session.scalars(select(BoardOutcomeBlock.matches)).all() == [16, 16, 8]
    _play(database, ids, ONE_LOSER_BOARD, 12, 5)
    refit(database, *ONE_LOSER_BOARD)
    with database.session(readonly=True) as session:
        assert session.scalar(select(func.count()).select_from(BoardOutcome)) == 0
        assert sum(session.scalars(select(BoardOutcomeBlock.matches))) == 52
    _play(database, ids, ONE_LOSER_BOARD, 3, 6)
    refit(database, *ONE_LOSER_BOARD)
    _assert_equals_a_fresh_fit(database, ONE_LOSER_BOARD, 1e-6)


def test_a_match_recorded_again_replaces_its_store_row(database) -> None:
    """The dead-worker case of ``test_matches_service``: a finished match put back in the queue and recorded
    again has one store row, with the second result."""
    ids = _world(database)
    table = ids[RANKED_BOARD[0]][:4]
    match_id = _queue(database, RANKED_BOARD[0], table)
    _record(database, match_id, RANKED_BOARD[0], [1, 2, 3, 4], random.Random(1))
    with database.session() as session:
        session.execute(update(Match).where(Match.id == match_id).values(status=MatchStatus.QUEUED))
    _record(database, match_id, RANKED_BOARD[0], [4, 3, 2, 1], random.Random(1))
    refit(database, *RANKED_BOARD)
    stored = _stored(database, RANKED_BOARD)
    assert stored[table[3]].rank == 1 and stored[table[0]].rank == 4
    with database.session(readonly=True) as session:
        assert session.scalar(select(func.count()).select_from(BoardOutcome)) == 1


def test_a_lower_id_match_finishing_after_a_fit_makes_the_leaderboard_stale(database) -> None:
    """The reconciler's check compares counts too: a fit that already holds the newest match id can still
    miss an older match that finished later."""
    ids = _world(database)
    game, players = RANKED_BOARD
    rng = random.Random(7)
    first, second = (_queue(database, game, ids[game][i:i + players]) for i in (0, 4))
    _record(database, second, game, [1, 2, 3, 4], rng)
    refit(database, game, players)
    with database.session(readonly=True) as session:
        assert stale_boards(session) == []
    _record(database, first, game, [2, 1, 3, 4], rng)
    with database.session(readonly=True) as session:
        assert stale_boards(session) == [RANKED_BOARD]
    assert refit(database, game, players) == 2
    with database.session(readonly=True) as session:
        assert stale_boards(session) == []
