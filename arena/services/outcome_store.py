"""A leaderboard's outcome store: one small packed row per published match, so a refit reads its whole log
from a few rows of one primary-key range instead of every seat row.

``publication`` writes one ``BoardOutcome`` row per match in the transaction that publishes it; a refit
that finds ``COMPACT_AT`` of them packs them into one ``BoardOutcomeBlock`` row. The store is checked
against the finished matches' count in the same snapshot, and rebuilt from the seat rows when they
disagree (matches recorded before the store existed, bulk loads). Figures: docs/benchmarks.md.

Each match's deal (``pack_deals``: tournament, ladder, seed) is kept in its block, so a refit reads its
deals with the blocks instead of every row of the matches table (0.3 s at 100,000 matches). The single
rows do not hold it (the worker's record path writes them): they are read joined to their match rows,
at most ``COMPACT_AT`` or so of them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import delete, func, insert, select
from sqlalchemy.orm import Session

from arena.storage.models import BoardOutcome, BoardOutcomeBlock, Match, MatchSeat, MatchStatus
from arena.storage.upsert import upsert

SEAT_FIELDS = 4  # bot id, rank, faults, decisions (see pack_seats)
DEAL_FIELDS = 3  # tournament id, ladder id (-1: none), seed (see pack_deals)
BLOCK = 4096  # matches per BoardOutcomeBlock row
COMPACT_AT = 256  # single BoardOutcome rows that make a refit pack them into a block


def pack_seats(bots: Sequence[int], ranks: Sequence[int], faults: Sequence[int], decisions: Sequence[int]) -> bytes:
    """A match's ``BoardOutcome.seats``: int32 little-endian bot ids in seat order, then the seats' ranks,
    faults and decisions asked (the last two give the leaderboard's fault rates)."""
    return np.asarray([*bots, *ranks, *faults, *decisions], dtype="<i4").tobytes()


def pack_deals(rows: Sequence[tuple[int | None, int | None, int]]) -> bytes:
    """A block's ``BoardOutcomeBlock.deals``: per match its tournament id, ladder id (-1 for none) and seed,
    int64 little-endian (what ``leaderboards.deal_key`` groups by)."""
    return np.asarray([(-1 if t is None else t, -1 if ladder is None else ladder, seed) for t, ladder, seed in rows],
                      dtype="<i8").reshape(-1, DEAL_FIELDS).tobytes()


def store_outcomes(session: Session, game: str, matches: Sequence[tuple[int, Sequence[Any]]]) -> None:
    """Add finished matches (id, seats in seat order) to their leaderboard's outcome store, in one statement
    (in the transaction that publishes them; a match recorded again after being put back in the queue
    replaces its row)."""
    upsert(session, BoardOutcome, [
        {"game": game, "players": len(seats), "match_id": match_id,
         "seats": pack_seats([s.bot_id for s in seats], [int(s.rank or 0) for s in seats],
                             [s.faults or 0 for s in seats], [s.decisions or 0 for s in seats])}
        for match_id, seats in matches], ("game", "players", "match_id"), replace=("seats",))


_DEAL_COLUMNS = (Match.tournament_id, Match.ladder_id, Match.seed)


def _board_matches(game: str, players: int) -> Any:
    return (Match.game == game, Match.num_players == players, Match.status == MatchStatus.FINISHED)


@dataclass(frozen=True, eq=False)
class Stored:
    """A leaderboard's outcome store as one snapshot read it (``read_outcomes``)."""

    ids: np.ndarray  # match ids, ascending (int64)
    seats: np.ndarray  # M x 4k int32: pack_seats' bot ids, ranks, faults, decisions
    deals: np.ndarray  # M x 3 int64: pack_deals' tournament, ladder, seed
    singles: int  # matches still in single rows
    finished: int  # finished matches of the leaderboard in the matches table
    complete: bool  # False when a block predates its deals column (the store is then rebuilt)


def read_outcomes(session: Session, game: str, players: int) -> Stored:
    """The leaderboard's stored outcomes sorted by match id, with their deals, and how many finished matches
    the store should hold (all read in one snapshot: SQLite's read transaction, REPEATABLE READ on
    PostgreSQL)."""
    if session.bind is not None and session.bind.dialect.name == "postgresql" and not session.in_transaction():
        session.connection(execution_options={"isolation_level": "REPEATABLE READ"})
    finished = session.scalar(select(func.count()).select_from(Match).where(*_board_matches(game, players)))
    blocks = session.execute(select(BoardOutcomeBlock.match_ids, BoardOutcomeBlock.seats, BoardOutcomeBlock.deals)
                             .where(BoardOutcomeBlock.game == game, BoardOutcomeBlock.players == players)
                             .order_by(BoardOutcomeBlock.last_match_id)).all()
    singles = session.execute(select(BoardOutcome.match_id, BoardOutcome.seats, *_DEAL_COLUMNS)
                              .join(Match, Match.id == BoardOutcome.match_id)
                              .where(BoardOutcome.game == game, BoardOutcome.players == players)
                              .order_by(BoardOutcome.match_id)).all()
    complete = all(deals is not None for _, _, deals in blocks)
    ids = np.concatenate([np.frombuffer(b"".join(bytes(ids) for ids, _, _ in blocks), dtype="<i4"),
                          np.fromiter((row[0] for row in singles), dtype=np.int64, count=len(singles))])
    raw = b"".join([*(bytes(seats) for _, seats, _ in blocks), *(bytes(row[1]) for row in singles)])
    seats = np.frombuffer(raw, dtype="<i4").reshape(len(ids), SEAT_FIELDS * players)
    if complete:
        deal_bytes = b"".join([*(bytes(deals) for _, _, deals in blocks), pack_deals([row[2:] for row in singles])])
        deals = np.frombuffer(deal_bytes, dtype="<i8").reshape(len(ids), DEAL_FIELDS)
    else:
        deals = np.full((len(ids), DEAL_FIELDS), -1, dtype=np.int64)
    order = np.argsort(ids, kind="stable")
    return Stored(ids[order].astype(np.int64), seats[order], deals[order].astype(np.int64), len(singles),
                  int(finished or 0), complete)


def _insert_blocks(session: Session, game: str, players: int, ids: list[int], seats: list[bytes],
                   deals: Sequence[tuple[int | None, int | None, int]]) -> None:
    """Pack matches (ids ascending, their ``pack_seats`` and deals) into blocks of ``BLOCK`` matches."""
    rows = [{"game": game, "players": players, "last_match_id": ids[min(first + BLOCK, len(ids)) - 1],
             "matches": len(ids[first:first + BLOCK]),
             "match_ids": np.asarray(ids[first:first + BLOCK], dtype="<i4").tobytes(),
             "seats": b"".join(seats[first:first + BLOCK]), "deals": pack_deals(deals[first:first + BLOCK])}
            for first in range(0, len(ids), BLOCK)]
    if rows:
        session.execute(insert(BoardOutcomeBlock), rows)


def compact_outcomes(session: Session, game: str, players: int) -> int:
    """Move the leaderboard's single rows into blocks (under the leaderboard's lock, so no match of this
    leaderboard is being recorded meanwhile); returns the matches moved."""
    singles = session.execute(select(BoardOutcome.match_id, BoardOutcome.seats, *_DEAL_COLUMNS)
                              .join(Match, Match.id == BoardOutcome.match_id)
                              .where(BoardOutcome.game == game, BoardOutcome.players == players)
                              .order_by(BoardOutcome.match_id)).all()
    ids = [row[0] for row in singles]
    if not ids or session.get(BoardOutcomeBlock, (game, players, ids[-1])) is not None:
        return 0  # a re-recorded match is in a block already: the next refit rebuilds the store instead
    _insert_blocks(session, game, players, ids, [bytes(row[1]) for row in singles], [row[2:] for row in singles])
    session.execute(delete(BoardOutcome).where(BoardOutcome.game == game, BoardOutcome.players == players)
                    .execution_options(synchronize_session=False))
    return len(ids)


def rebuild_outcomes(session: Session, game: str, players: int) -> int:
    """Rewrite the leaderboard's store from the seat rows of its finished matches (matches recorded before
    the store existed, bulk loads, or any disagreement between the store and the matches table)."""
    for table in (BoardOutcome, BoardOutcomeBlock):
        session.execute(delete(table).where(table.game == game, table.players == players)
                        .execution_options(synchronize_session=False))
    finished = select(Match.id).where(*_board_matches(game, players))
    deals = {match_id: (tournament, ladder, seed) for match_id, tournament, ladder, seed in session.execute(
        select(Match.id, *_DEAL_COLUMNS).where(*_board_matches(game, players)))}
    seats = session.execute(select(MatchSeat.match_id, MatchSeat.bot_id, MatchSeat.rank, MatchSeat.faults,
                                   MatchSeat.decisions)
                            .where(MatchSeat.match_id.in_(finished)).order_by(MatchSeat.match_id, MatchSeat.seat))
    grouped: dict[int, list[tuple[int, int, int, int]]] = defaultdict(list)
    for match_id, *seat in seats:
        grouped[match_id].append(tuple(value or 0 for value in seat))  # type: ignore[arg-type]
    _insert_blocks(session, game, players, list(grouped),
                   [pack_seats(*zip(*rows, strict=True)) for rows in grouped.values()],
                   [deals[match_id] for match_id in grouped])
    return len(grouped)
