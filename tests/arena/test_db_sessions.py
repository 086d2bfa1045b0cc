"""arena.storage.db's units of work: transactional, read-only and autocommit sessions on both databases."""

from __future__ import annotations

import pytest
from sqlalchemy import event, insert, select, text
from sqlalchemy.exc import IntegrityError, OperationalError

from arena.storage.db import pipelined
from arena.storage.models import MetricCounter
from arena.storage.upsert import upsert
from tests.arena.conftest import end_backend, postgres_database


def _value(database) -> float | None:  # type: ignore[no-untyped-def]
    with database.session(readonly=True) as session:
        return session.scalar(select(MetricCounter.value))


def _next_unit_writes(database) -> None:  # type: ignore[no-untyped-def]
    """The next unit of work gets a usable connection: its write lands."""
    with database.session() as session:
        upsert(session, MetricCounter, [{"name": "b", "labels": "", "value": 4.0}], ("name", "labels"),
               add=("value",))
    assert _value(database) == 4.0


def _in_transaction(session) -> bool:  # type: ignore[no-untyped-def]
    """Whether the driver's connection has a transaction open (what would cost a COMMIT round trip)."""
    driver = session.connection().connection.driver_connection
    if hasattr(driver, "in_transaction"):  # sqlite3
        return bool(driver.in_transaction)
    from psycopg.pq import TransactionStatus
    return driver.info.transaction_status != TransactionStatus.IDLE


def test_an_autocommit_session_writes_each_statement_at_once_in_no_transaction(database) -> None:
    sent: list[str] = []
    event.listen(database.engine, "before_cursor_execute", lambda _c, _cur, sql, *_: sent.append(sql.split()[0]))
    with database.session(autocommit=True) as session:
        upsert(session, MetricCounter, [{"name": "a", "labels": "", "value": 1.0}], ("name", "labels"),
               replace=("value",))
        assert not _in_transaction(session)
        assert [s.upper() for s in sent] == ["INSERT"]  # no BEGIN (SQLite's is ours to send)
        assert _value(database) == 1.0  # seen by another connection before the session ends
    with database.session() as session:  # a plain unit of work holds one open
        upsert(session, MetricCounter, [{"name": "a", "labels": "", "value": 2.0}], ("name", "labels"),
               replace=("value",))
        assert _in_transaction(session)


def test_a_connection_back_from_autocommit_is_transactional_again(database) -> None:
    for _ in range(3):  # the pool hands the same connection back
        with database.session(autocommit=True) as session:
            session.execute(select(1))
    with pytest.raises(RuntimeError), database.session() as session:
        upsert(session, MetricCounter, [{"name": "b", "labels": "", "value": 2.0}], ("name", "labels"),
               replace=("value",))
        raise RuntimeError("the unit of work fails after its write")
    assert _value(database) is None  # rolled back: the write was inside a transaction


def test_pipelined_writes_land_with_their_transaction(database) -> None:
    """``pipelined``: on PostgreSQL the driver is in pipeline mode inside (the writes' answers are read once,
    as the block ends); on both databases what was written there is in the transaction after it."""
    with database.session() as session:
        with pipelined(session):
            driver = session.connection().connection.driver_connection
            if database.url.startswith("postgresql"):
                from psycopg.pq import PipelineStatus
                assert driver.pgconn.pipeline_status == PipelineStatus.ON
            for value in (1.0, 2.5):
                upsert(session, MetricCounter, [{"name": "a", "labels": "", "value": value}], ("name", "labels"),
                       add=("value",))
        assert session.scalar(select(MetricCounter.value)) == 3.5  # read after the block, in the transaction
    assert _value(database) == 3.5


@pytest.mark.parametrize("failing_last", [True, False])
def test_a_write_that_fails_in_a_pipeline_is_sqlalchemys_error_and_its_transaction_is_undone(
        database, failing_last: bool) -> None:
    """On PostgreSQL a failure is only known later: at the block's next statement (SQLAlchemy's error for that
    one) or as the block ends (raised there as SQLAlchemy's error for it). Either way the transaction (the
    writes before it in the block too) is rolled back, and the connection goes back to the pool usable."""
    bad = {"name": None, "labels": "", "value": 2.0}
    with pytest.raises(IntegrityError), database.session() as session, pipelined(session):
        upsert(session, MetricCounter, [{"name": "a", "labels": "", "value": 1.0}], ("name", "labels"),
               add=("value",))
        session.connection().execute(insert(MetricCounter.__table__), bad)
        if not failing_last:
            upsert(session, MetricCounter, [{"name": "c", "labels": "", "value": 1.0}], ("name", "labels"),
                   add=("value",))
    assert _value(database) is None
    _next_unit_writes(database)


def test_a_pipelined_block_inside_another_joins_its_pipeline(database) -> None:
    """A recorder's pipeline inside the one its caller opened (``publication.settle_deal``) must not end it:
    psycopg's own nesting would sync there, a round trip more. Seen from outside: a write that fails in the
    inner block is known only as the outer one ends (on PostgreSQL; SQLite raises it at once)."""
    bad = {"name": None, "labels": "", "value": 2.0}
    after_inner: list[bool] = []
    with pytest.raises(IntegrityError), database.session() as session, pipelined(session):
        with pipelined(session):
            session.connection().execute(insert(MetricCounter.__table__), bad)
        after_inner.append(True)
    assert after_inner == ([True] if database.url.startswith("postgresql") else [])
    assert _value(database) is None
    _next_unit_writes(database)


def test_a_connection_lost_in_a_pipeline_is_invalidated_and_replaced() -> None:
    """The backend is ended while the pipeline's writes wait for their answers: the block raises SQLAlchemy's
    OperationalError saying the connection was invalidated, and the next unit of work gets a new one."""
    with postgres_database() as database:
        with pytest.raises(OperationalError) as raised, database.session() as session, pipelined(session):
            upsert(session, MetricCounter, [{"name": "a", "labels": "", "value": 1.0}], ("name", "labels"),
                   add=("value",))
            end_backend(database, session)
        assert raised.value.connection_invalidated
        assert _value(database) is None
        _next_unit_writes(database)


def test_an_error_raised_at_a_pipelines_sync_leaves_its_connection_in_the_pool() -> None:
    """A statement the server cancels (here its timeout; a deadlock alike) fails as the block ends, but the
    connection left pipeline mode normally: its transaction is rolled back and the pool keeps it. (Every
    OperationalError invalidated the connection: a reconnect and a new backend for a timeout.)"""
    with postgres_database() as database:
        with pytest.raises(OperationalError) as raised, database.session() as session:
            session.execute(text("SET LOCAL statement_timeout = 50"))
            pid = session.connection().connection.driver_connection.info.backend_pid
            with pipelined(session):
                upsert(session, MetricCounter, [{"name": "a", "labels": "", "value": 1.0}], ("name", "labels"),
                       add=("value",))
                session.connection().execute(text("DO $$ BEGIN PERFORM pg_sleep(2); END $$"))
        assert "statement timeout" in str(raised.value) and not raised.value.connection_invalidated
        assert _value(database) is None
        with database.session() as session:  # the same connection, from the pool
            assert session.connection().connection.driver_connection.info.backend_pid == pid
        _next_unit_writes(database)


def test_a_blocks_own_error_with_the_connection_lost_in_its_pipeline_is_the_error_raised() -> None:
    """The block raises while its pipeline's writes wait on a backend that was ended: psycopg cannot leave
    pipeline mode and only logs it. The connection is invalidated, so the unit of work's ROLLBACK is not sent
    on it and the block's own error is what the caller sees (it was SQLAlchemy's, about the lost connection);
    the next unit of work gets a new connection."""
    with postgres_database() as database:
        with pytest.raises(RuntimeError, match="the block's own"), database.session() as session, pipelined(session):
            upsert(session, MetricCounter, [{"name": "a", "labels": "", "value": 1.0}], ("name", "labels"),
                   add=("value",))
            end_backend(database, session)
            raise RuntimeError("the block's own")
        assert _value(database) is None
        _next_unit_writes(database)
