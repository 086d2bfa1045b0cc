"""arena.storage.compiled_plans: a worker's writes through statements compiled once, on SQLite and on PostgreSQL
(in a pipeline there too), leaving what SQLAlchemy's own execute would leave."""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime

import pytest
from sqlalchemy import bindparam, event, insert, select
from sqlalchemy.exc import IntegrityError, OperationalError

from arena.services.matches import _once_more_if_lost
from arena.storage import compiled_plans
from arena.storage.compiled_plans import rows_in_turn, write
from arena.storage.db import core, pipelined
from arena.storage.models import Account, MetricCounter, WebSession
from arena.storage.read_together import read_together
from arena.storage.upsert import upsert
from tests.arena.conftest import end_backend, postgres_database

_SESSIONS = WebSession.__table__
_ACCOUNTS = Account.__table__
_AT = datetime(2026, 12, 5, 9, 30, 1, 250000, tzinfo=UTC)


def plan_cache_entry(connection, statement, columns):  # type: ignore[no-untyped-def]
    """The plan (or refusal) kept for ``statement`` with these columns on this connection's dialect, if any."""
    return compiled_plans._plans.get((id(statement), id(connection.dialect), columns))


def _account(database) -> int:  # type: ignore[no-untyped-def]
    with database.session() as session:
        return core(session).execute(insert(_ACCOUNTS).values(name="a", token_hash="h", is_admin=False,
                                                               created_at=_AT).returning(_ACCOUNTS.c.id)).scalar_one()


def _sessions(account: int, prefix: str) -> list[dict]:
    return [{"key_hash": f"{prefix}{i}", "account_id": account, "created_at": _AT, "expires_at": _AT.replace(day=i + 6)}
            for i in range(3)]


def test_written_rows_read_back_as_those_sqlalchemy_wrote(database) -> None:
    """The same rows, typed values included (aware datetimes through the column's type), whether written here
    or by SQLAlchemy's execute; an upsert (``upsert.upsert``, written here) adds to the rows already there."""
    account = _account(database)
    with database.session() as session:
        write(core(session), insert(_SESSIONS), _sessions(account, "plan"))
        core(session).execute(insert(_SESSIONS), _sessions(account, "own"))
        upsert(session, MetricCounter, [{"name": "m", "labels": "x", "value": 1.5},
                                        {"name": "m", "labels": "y", "value": 2}], ("name", "labels"), add=("value",))
        upsert(session, MetricCounter, [{"name": "m", "labels": "x", "value": 1.0}], ("name", "labels"), add=("value",))
    with database.session(readonly=True) as session:
        rows = {key: (account_id, created, expires) for key, account_id, created, expires in session.execute(
            select(_SESSIONS.c.key_hash, _SESSIONS.c.account_id, _SESSIONS.c.created_at, _SESSIONS.c.expires_at))}
        stored = {key: rest for key, *rest in core(session).exec_driver_sql(  # as stored: no type's processing
            "SELECT key_hash, account_id, created_at, expires_at FROM web_sessions")}
        counters = dict(session.execute(select(MetricCounter.labels, MetricCounter.value)).all())
    for i in range(3):
        assert rows[f"plan{i}"] == rows[f"own{i}"] and stored[f"plan{i}"] == stored[f"own{i}"]
        assert rows[f"plan{i}"][1] == _AT and rows[f"plan{i}"][2].tzinfo is not None
    assert counters == {"x": 2.5, "y": 2.0}


def test_a_write_that_needs_sqlalchemys_defaults_gets_them(database) -> None:
    """Columns left out whose defaults are Python's (an account's creation time, its admin flag) are filled in as
    SQLAlchemy fills them: such a statement goes through SQLAlchemy."""
    with database.session() as session:
        write(core(session), insert(_ACCOUNTS), [{"name": "b", "token_hash": "hb"}, {"name": "c", "token_hash": "hc"}])
    with database.session(readonly=True) as session:
        rows = session.execute(select(Account.name, Account.is_admin, Account.created_at).order_by(Account.name)).all()
    assert [(name, admin) for name, admin, _created in rows] == [("b", False), ("c", False)]
    assert all(created is not None for _name, _admin, created in rows)


def test_each_write_is_heard_and_a_failure_is_sqlalchemys_error_undoing_the_transaction(database) -> None:
    """The engine's listeners hear the statement before and after (several rows: one executemany on SQLite); a
    constraint the database enforces fails as SQLAlchemy's IntegrityError, and the unit of work rolls back."""
    account = _account(database)
    heard: list[tuple[str, bool]] = []
    event.listen(database.engine, "before_cursor_execute",
                 lambda _c, _cur, sql, _p, _ctx, many: heard.append((sql.split()[0], many)))
    event.listen(database.engine, "after_cursor_execute", lambda *_: heard.append(("after", False)))
    with database.session() as session:
        write(core(session), insert(_SESSIONS), _sessions(account, "k"))
    assert heard[-2:] == [("INSERT", True), ("after", False)]
    with pytest.raises(IntegrityError), database.session() as session:
        write(core(session), insert(_SESSIONS), _sessions(account, "n"))
        write(core(session), insert(_SESSIONS), _sessions(account, "k"))  # the same keys again
    with database.session(readonly=True) as session:
        keys = sorted(session.scalars(select(WebSession.key_hash)))
    assert keys == ["k0", "k1", "k2"]


def test_a_write_on_a_connection_that_has_run_nothing_is_in_its_transaction(database) -> None:
    """Regression (review finding): the driver's cursor on a connection with no transaction begun wrote outside
    any (SQLite's driver is in autocommit mode), so a rollback left the rows. It begins one, as SQLAlchemy's own
    execute would."""
    account = _account(database)
    with database.engine.connect() as connection:
        write(connection, insert(_SESSIONS), _sessions(account, "gone"))
        assert connection.in_transaction()
        connection.rollback()
    with database.session(readonly=True) as session:
        assert list(session.scalars(select(WebSession.key_hash))) == []


def test_a_statement_sqlalchemy_must_run_is_not_compiled_again_on_each_write(database) -> None:
    """Regression (review finding): a write that needs Python-side defaults was compiled, refused and thrown
    away on every call (a match's fault rows: 131 us a call against SQLAlchemy's 21). The refusal is kept."""
    statement = insert(_ACCOUNTS)
    with database.session() as session:
        write(core(session), statement, [{"name": "d", "token_hash": "hd"}])
        first = plan_cache_entry(core(session), statement, ("name", "token_hash"))
        write(core(session), statement, [{"name": "e", "token_hash": "he"}])
        assert plan_cache_entry(core(session), statement, ("name", "token_hash")) is first
    assert first is not None and first.refused


@pytest.mark.parametrize("failing_last", [True, False])
def test_a_write_that_fails_in_a_pipeline_is_sqlalchemys_error_undoing_the_transaction(database,
                                                                                      failing_last: bool) -> None:
    """In a pipeline (PostgreSQL) the driver's failure is known only at the block's next statement, or as it ends:
    SQLAlchemy's IntegrityError either way, and every write of the unit of work is rolled back."""
    account = _account(database)
    with pytest.raises(IntegrityError), database.session() as session, pipelined(session):
        write(core(session), insert(_SESSIONS), _sessions(account, "p"))
        write(core(session), insert(_SESSIONS), _sessions(account, "p"))  # the same keys again
        if not failing_last:
            write(core(session), insert(_SESSIONS), _sessions(account, "q"))
    with database.session(readonly=True) as session:
        assert list(session.scalars(select(WebSession.key_hash))) == []
    with database.session() as session:  # the connection went back to the pool usable
        write(core(session), insert(_SESSIONS), _sessions(account, "r"))
    with database.session(readonly=True) as session:
        assert sorted(session.scalars(select(WebSession.key_hash))) == ["r0", "r1", "r2"]


def _next_unit_writes_on_a_new_connection(database, account: int, gone: int) -> None:  # type: ignore[no-untyped-def]
    with database.session() as session:
        assert core(session).connection.driver_connection.info.backend_pid != gone
        write(core(session), insert(_SESSIONS), _sessions(account, "next"))
    with database.session(readonly=True) as session:
        assert sorted(session.scalars(select(WebSession.key_hash))) == ["next0", "next1", "next2"]


def test_regression_a_write_on_a_lost_connection_says_it_was_invalidated() -> None:
    """Regression (review finding): on the driver's cursor a lost connection's error was SQLAlchemy's, but not
    flagged as invalidated (and nothing was), where SQLAlchemy's own execute flags it and invalidates the pool: a
    worker's record then failed instead of running once more on a new connection (``_once_more_if_lost``)."""
    with postgres_database() as database:
        account = _account(database)
        session = database.sessions()
        try:
            gone = end_backend(database, session)
            with pytest.raises(OperationalError) as raised:  # the write's own error, not a rollback's after it
                write(core(session), insert(_SESSIONS), _sessions(account, "lost"))
            assert raised.value.connection_invalidated
            session.rollback()
        finally:
            session.close()
        _next_unit_writes_on_a_new_connection(database, account, gone)


def test_regression_a_connection_lost_in_a_pipeline_is_invalidated_as_the_block_ends() -> None:
    """The same inside ``pipelined``, where the failure surfaces at a later write of the block (the block's own end
    flags a lost connection by itself, so the writes go on until one meets it): the error says the connection was
    invalidated."""
    with postgres_database() as database:
        account = _account(database)
        met: list[int] = []
        with pytest.raises(OperationalError) as raised, database.session() as session, pipelined(session):
            write(core(session), insert(_SESSIONS), _sessions(account, "p"))
            gone = end_backend(database, session)
            for attempt in range(200):
                met.append(attempt)
                write(core(session), insert(_SESSIONS), _sessions(account, f"q{attempt}-"))
                time.sleep(0.005)
            met.clear()  # (no write met it: the block's end did)
        assert met, "no write of the block met the lost connection"
        assert raised.value.connection_invalidated
        _next_unit_writes_on_a_new_connection(database, account, gone)


def test_regression_a_record_whose_connection_is_lost_in_its_publication_runs_once_more() -> None:
    """What a worker does with it (``matches._once_more_if_lost``): the unit of work runs again on a new connection
    and its writes land once."""
    with postgres_database() as database:
        account = _account(database)
        runs: list[int] = []

        def record() -> None:
            runs.append(1)
            with database.session() as session, pipelined(session):
                write(core(session), insert(_SESSIONS), _sessions(account, "a"))
                if len(runs) == 1:
                    end_backend(database, session)
                write(core(session), insert(_SESSIONS), _sessions(account, "b"))

        _once_more_if_lost(record)
        assert len(runs) == 2
        with database.session(readonly=True) as session:
            assert sorted(session.scalars(select(WebSession.key_hash))) == ["a0", "a1", "a2", "b0", "b1", "b2"]


def test_regression_an_insert_written_here_asks_for_no_ids_back(database) -> None:
    """Regression (review finding): a plan compiled as for one row asked PostgreSQL to send back every new row's id
    (``RETURNING``), which nobody reads; SQLAlchemy's own executemany leaves it out, and so does the plan now."""
    account = _account(database)
    sent: list[str] = []
    event.listen(database.engine, "before_cursor_execute", lambda _c, _cur, sql, *_: sent.append(sql))
    with database.session() as session:
        write(core(session), insert(_SESSIONS), _sessions(account, "k"))
        write(core(session), insert(_ACCOUNTS), [{"name": "f", "token_hash": "hf", "is_admin": False,
                                                  "created_at": _AT}])
    inserts = [sql for sql in sent if sql.startswith("INSERT")]
    assert len(inserts) == 2 and not any("RETURNING" in sql for sql in inserts), inserts


def test_regression_the_statement_log_shows_the_statements_run_here(database, caplog) -> None:
    """Regression (a review's nit, twentieth session): SQLAlchemy's statement log (``echo``, or its
    ``sqlalchemy.engine`` logger at INFO) left out every statement run on the driver's cursor: the worker's
    whole record, its reads sent together in one pipeline on PostgreSQL (``read_together``) among them. Each is
    logged now with its parameters, a long one cut as SQLAlchemy cuts it."""
    account = _account(database)
    caplog.set_level(logging.INFO, logger="sqlalchemy.engine")
    long_key = "k" * 1000
    by_key = select(_SESSIONS.c.key_hash).where(_SESSIONS.c.key_hash == bindparam("key"))
    with database.session() as session:
        write(core(session), insert(_SESSIONS), _sessions(account, "logged"))
        found = rows_in_turn(core(session), by_key, {"key": "logged0"})
        together = read_together(core(session), [(by_key, {"key": "logged1"}), (by_key, {"key": long_key})])
    assert [row.key_hash for row in found] == ["logged0"]
    assert [[row.key_hash for row in rows] for rows in together] == [["logged1"], []]
    messages = [record.getMessage() for record in caplog.records if record.name.startswith("sqlalchemy.engine")]
    assert any(m.startswith("INSERT INTO web_sessions") for m in messages), messages
    assert sum(m.startswith("SELECT web_sessions.key_hash") for m in messages) == 3, messages
    for key in ("logged0", "logged1", "logged2"):  # (the rows written, then the two keys read)
        assert any("compiled plan" in m and f"'{key}'" in m for m in messages), (key, messages)
    assert any("characters truncated" in m for m in messages) and not any(long_key in m for m in messages)
