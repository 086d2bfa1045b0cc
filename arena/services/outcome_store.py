"""A leaderboard's outcome store: one small packed row per published match, so a refit reads its whole log
from a few rows of one primary-key range instead of every seat row.

``publication`` writes one ``BoardOutcome`` row per match in the transaction that publishes it; a refit
that finds ``COMPACT_AT`` of them packs them into one ``BoardOutcomeBlock`` row. The store is checked
against the finished matches' count in the same snapshot, and rebuilt from the seat rows when they
disagree (matches recorded before the store existed, bulk loads). Figures: docs/benchmarks.md.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np
from sqlalchemy import delete, func, insert, select
from sqlalchemy.orm import Session

from arena.storage.models import BoardOutcome, BoardOutcomeBlock, Match, MatchSeat, MatchStatus

SEAT_FIELDS = 4  # bot id, rank, faults, decisions (see pack_seats)
BLOCK = 4096  # matches per BoardOutcomeBlock row
COMPACT_AT = 256  # single BoardOutcome rows that make a refit pack them into a block


def pack_seats(bots: Sequence[int], ranks: Sequence[int], faults: Sequence[int], decisions: Sequence[int]) -> bytes:
    """A match's ``BoardOutcome.seats``: int32 little-endian bot ids in seat order, then the seats' ranks,
    faults and decisions asked (the last two give the leaderboard's fault rates)."""
    return np.asarray([*bots, *ranks, *faults, *decisions], dtype="<i4").tobytes()


def store_outcome(session: Session, match_id: int, game: str, seats: Sequence[MatchSeat]) -> None:
    """Add a finished match to its leaderboard's outcome store, from its seat rows in seat order (in the
    transaction that records it; a match recorded again after being put back in the queue replaces its row)."""
    packed = pack_seats([s.bot_id for s in seats], [int(s.rank or 0) for s in seats], [s.faults or 0 for s in seats],
                        [s.decisions or 0 for s in seats])
    session.merge(BoardOutcome(game=game, players=len(seats), match_id=match_id, seats=packed))


def _board_matches(game: str, players: int) -> Any:
    return (Match.game == game, Match.num_players == players, Match.status == MatchStatus.FINISHED)


def read_outcomes(session: Session, game: str, players: int) -> tuple[np.ndarray, np.ndarray, int, int]:
    """The leaderboard's stored outcomes sorted by match id: ids, an M x 4k int array (``pack_seats``'s bot
    ids, ranks, faults and decisions), how many are still single rows, and how many finished matches the
    store should hold (all read in one snapshot: SQLite's read transaction, REPEATABLE READ on PostgreSQL)."""
    if session.bind is not None and session.bind.dialect.name == "postgresql" and not session.in_transaction():
        session.connection(execution_options={"isolation_level": "REPEATABLE READ"})
    finished = session.scalar(select(func.count()).select_from(Match).where(*_board_matches(game, players)))
    blocks = session.execute(select(BoardOutcomeBlock.match_ids, BoardOutcomeBlock.seats)
                             .where(BoardOutcomeBlock.game == game, BoardOutcomeBlock.players == players)
                             .order_by(BoardOutcomeBlock.last_match_id)).all()
    singles = session.execute(select(BoardOutcome.match_id, BoardOutcome.seats)
                              .where(BoardOutcome.game == game, BoardOutcome.players == players)
                              .order_by(BoardOutcome.match_id)).all()
    ids = np.concatenate([np.frombuffer(b"".join(bytes(ids) for ids, _ in blocks), dtype="<i4"),
                          np.fromiter((match_id for match_id, _ in singles), dtype=np.int64, count=len(singles))])
    raw = b"".join([*(bytes(seats) for _, seats in blocks), *(bytes(seats) for _, seats in singles)])
    seats = np.frombuffer(raw, dtype="<i4").reshape(len(ids), SEAT_FIELDS * players)
    order = np.argsort(ids, kind="stable")
    return ids[order].astype(np.int64), seats[order], len(singles), int(finished or 0)


def _insert_blocks(session: Session, game: str, players: int, ids: list[int], seats: list[bytes]) -> None:
    """Pack matches (ids ascending, their ``pack_seats``) into blocks of ``BLOCK`` matches."""
    rows = [{"game": game, "players": players, "last_match_id": ids[min(first + BLOCK, len(ids)) - 1],
             "matches": len(ids[first:first + BLOCK]),
             "match_ids": np.asarray(ids[first:first + BLOCK], dtype="<i4").tobytes(),
             "seats": b"".join(seats[first:first + BLOCK])} for first in range(0, len(ids), BLOCK)]
    if rows:
        session.execute(insert(BoardOutcomeBlock), rows)


def compact_outcomes(session: Session, game: str, players: int) -> int:
    """Move the leaderboard's single rows into blocks (under the leaderboard's lock, so no match of this
    leaderboard is being recorded meanwhile); returns the matches moved."""
    singles = session.execute(select(BoardOutcome.match_id, BoardOutcome.seats)
                              .where(BoardOutcome.game == game, BoardOutcome.players == players)
                              .order_by(BoardOutcome.match_id)).all()
    ids = [match_id for match_id, _ in singles]
    if not ids or session.get(BoardOutcomeBlock, (game, players, ids[-1])) is not None:
        return 0  # a re-recorded match is in a block already: the next refit rebuilds the store instead
    _insert_blocks(session, game, players, ids, [bytes(seats) for _, seats in singles])
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
    seats = session.execute(select(MatchSeat.match_id, MatchSeat.bot_id, MatchSeat.rank, MatchSeat.faults,
                                   MatchSeat.decisions)
                            .where(MatchSeat.match_id.in_(finished)).order_by(MatchSeat.match_id, MatchSeat.seat))
    grouped: dict[int, list[tuple[int, int, int, int]]] = defaultdict(list)
    for match_id, *seat in seats:
        grouped[match_id].append(tuple(value or 0 for value in seat))  # type: ignore[arg-type]
    _insert_blocks(session, game, players, list(grouped),
                   [pack_seats(*zip(*rows, strict=True)) for rows in grouped.values()])
    return len(grouped)
