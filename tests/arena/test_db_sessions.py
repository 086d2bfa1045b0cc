"""arena.storage.db's units of work: transactional, read-only and autocommit sessions on both databases."""

from __future__ import annotations

import pytest
from sqlalchemy import event, select

from arena.storage.models import MetricCounter
from arena.storage.upsert import upsert


def _value(database) -> float | None:  # type: ignore[no-untyped-def]
    with database.session(readonly=True) as session:
        return session.scalar(select(MetricCounter.value))


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
