"""arena.services.leaderboards' board lock: taken by its own statement (``lock_board``) or inside another
statement (``board_lock_column``, a worker's sealing UPDATE), it is the same PostgreSQL advisory lock."""

from __future__ import annotations

from sqlalchemy import event, literal, select, text

from arena.services.leaderboards import board_lock_column, board_locked, lock_board
from tests.arena.conftest import postgres_database


def _free(engine, key: str) -> bool:  # type: ignore[no-untyped-def]
    """Whether another connection could take the lock now (it lets it go at once if it could)."""
    with engine.connect() as other:
        taken = other.scalar(text("SELECT pg_try_advisory_xact_lock(hashtext(:key))"), {"key": key})
        other.rollback()
    return bool(taken)


def test_a_lock_taken_in_a_statement_is_lock_boards_lock_and_is_not_asked_again() -> None:
    with postgres_database() as database:
        sent: list[str] = []
        event.listen(database.engine, "before_cursor_execute", lambda _c, _cur, sql, *_: sent.append(sql))
        with database.session() as session:
            session.execute(select(board_lock_column(literal("pajarracos"), literal(4))))
            board_locked(session, "pajarracos", 4)
            assert not _free(database.engine, "board:pajarracos:4")  # the very key lock_board uses
            assert _free(database.engine, "board:pajarracos:3")
            asked = len(sent)
            lock_board(session, "pajarracos", 4)  # held: no statement
            assert len(sent) == asked
            lock_board(session, "pajarracos", 3)
            assert len(sent) == asked + 1 and not _free(database.engine, "board:pajarracos:3")
        assert _free(database.engine, "board:pajarracos:4")  # gone with the transaction
        with database.session() as session:  # a new transaction holds nothing: lock_board asks again
            asked = len(sent)
            lock_board(session, "pajarracos", 4)
            assert len(sent) == asked + 1
