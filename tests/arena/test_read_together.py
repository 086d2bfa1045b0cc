"""arena.storage.read_together: several statements' rows in one round trip on PostgreSQL, and in turn on SQLite,
handed back as SQLAlchemy itself would hand them back."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import JSON, bindparam, event, func, insert, literal, select, update
from sqlalchemy.exc import IntegrityError, OperationalError

from arena.storage.db import core, in_pipeline
from arena.storage.json_rows import json_rows
from arena.storage.models import MetricCounter
from arena.storage.read_together import read_together
from arena.storage.types import UtcDateTime
from tests.arena.conftest import postgres_database

_COUNTERS = MetricCounter.__table__
# What a worker's record asks for, in kind: an UPDATE's RETURNING, a JSON aggregate, a literal IN list (which
# SQLAlchemy expands as it sends the statement), a bound JSON value, a column whose type processes what is read.
_BUMP = (update(_COUNTERS).where(_COUNTERS.c.name == bindparam("which"))
         .values(value=_COUNTERS.c.value + bindparam("by")).returning(_COUNTERS.c.name, _COUNTERS.c.value))
_READ = (select(json_rows(_COUNTERS.c.name, _COUNTERS.c.value).label("rows"),
                literal(datetime(2026, 1, 2, 3, 4, 5), UtcDateTime()).label("at"),
                bindparam("payload", type_=MetricCounter.__table__.c.labels.type).label("payload"),
                # a None through the JSON type is JSON's null, not SQL's NULL; a name SQLAlchemy escapes
                bindparam("doc.v", type_=JSON()).is_(None).label("doc_is_sql_null"))
         .where(_COUNTERS.c.name.in_(["a", "b"])))
_NONE = update(_COUNTERS).where(_COUNTERS.c.name == "nobody").values(value=0.0).returning(_COUNTERS.c.value)
_STATEMENTS = [(_BUMP, {"which": "a", "by": 2.0}), (_READ, {"payload": "x", "doc.v": None}), (_NONE, {}),
               (_BUMP, {"which": "b", "by": 1.0})]


def _seed(database) -> None:  # type: ignore[no-untyped-def]
    with database.session() as session:
        session.execute(insert(_COUNTERS), [{"name": "a", "labels": "", "value": 1.0},
                                            {"name": "b", "labels": "", "value": 5.0}])


def _as_sqlalchemy_reads(database) -> list[list[tuple]]:  # type: ignore[no-untyped-def]
    with database.session() as session:
        answers = [[tuple(row) for row in core(session).execute(statement, params)]
                   for statement, params in _STATEMENTS]
        session.rollback()
    return answers


def test_rows_read_together_are_sqlalchemys_own(database) -> None:
    """Same values, same types (an aware UTC datetime through the column's own type, JSON decoded), by position
    and by name, in the statements' order; a statement that matches nothing reads no rows."""
    _seed(database)
    expected = _as_sqlalchemy_reads(database)
    with database.session() as session:
        answers = read_together(core(session), _STATEMENTS)
    assert [[tuple(row) for row in rows] for rows in answers] == expected
    bumped, (read,), nothing, _other = answers
    assert bumped[0].name == "a" and bumped[0].value == 3.0
    assert read.at == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC) and read.at.tzinfo is not None
    assert sorted(map(tuple, read.rows)) == [("a", 3.0), ("b", 5.0)] and read.payload == "x"
    assert not read.doc_is_sql_null
    assert nothing == []
    with database.session(readonly=True) as session:  # the UPDATEs committed with the unit of work
        assert dict(session.execute(select(_COUNTERS.c.name, _COUNTERS.c.value)).all()) == {"a": 3.0, "b": 6.0}


def test_statements_read_together_go_in_one_pipeline_on_postgresql(database) -> None:
    """Each statement is heard by the engine's listeners; on PostgreSQL all are sent (in pipeline mode) before
    any answer is read, one round trip; on SQLite each runs and answers in turn."""
    _seed(database)
    heard: list[tuple[str, bool]] = []
    event.listen(database.engine, "before_cursor_execute",
                 lambda conn, _cur, sql, *_: heard.append(("sent " + sql.split()[0], in_pipeline(conn))))
    event.listen(database.engine, "after_cursor_execute", lambda conn, *_: heard.append(("answered", False)))
    with database.session() as session:
        read_together(core(session), _STATEMENTS)
    if database.url.startswith("postgresql"):
        assert heard == [("sent UPDATE", True), ("sent SELECT", True), ("sent UPDATE", True), ("sent UPDATE", True),
                         *[("answered", False)] * 4]
    else:
        assert heard[-8:] == [("sent UPDATE", False), ("answered", False), ("sent SELECT", False), ("answered", False),
                              ("sent UPDATE", False), ("answered", False), ("sent UPDATE", False), ("answered", False)]


def test_a_statement_alone_runs_as_sqlalchemys_own(database) -> None:
    """Nothing to save with one statement: it goes through SQLAlchemy, outside any pipeline."""
    _seed(database)
    piped: list[bool] = []
    event.listen(database.engine, "before_cursor_execute", lambda conn, *_: piped.append(in_pipeline(conn)))
    with database.session() as session:
        (rows,) = read_together(core(session), _STATEMENTS[:1])
    assert [tuple(row) for row in rows] == [("a", 3.0)] and piped[-1] is False


def test_a_statement_that_fails_among_others_is_sqlalchemys_error_and_undoes_the_transaction(database) -> None:
    """The failure is the server's, known at the pipeline's end on PostgreSQL: SQLAlchemy's error for it, the
    whole transaction (the statements before it too) rolled back, the connection still usable."""
    _seed(database)
    failing = insert(_COUNTERS).values(name=None, labels="", value=1.0)
    with pytest.raises(IntegrityError), database.session() as session:
        read_together(core(session), [_STATEMENTS[0], (failing, {}), _STATEMENTS[3]])
    with database.session() as session:
        assert dict(session.execute(select(_COUNTERS.c.name, _COUNTERS.c.value)).all()) == {"a": 1.0, "b": 5.0}
        assert read_together(core(session), _STATEMENTS)[0][0].value == 3.0


def test_a_connection_lost_while_reading_together_is_invalidated_and_so_are_the_pools_others() -> None:
    """The backend ends while the statements wait for their answers: SQLAlchemy's OperationalError saying the
    connection was invalidated (what a worker's record then runs once more on a new one, ``_once_more_if_lost``).
    As when SQLAlchemy's own execute finds a connection lost, the pool's other connections are not handed out
    again (a restart, or a failover with no goodbye, left them as dead, and one returned less than a second ago
    would be trusted without a round trip: review finding)."""
    with postgres_database() as database:
        _seed(database)
        other = database.engine.connect()
        pooled = other.connection.driver_connection
        with pytest.raises(OperationalError) as raised, database.session() as session:
            assert session.connection().connection.driver_connection is not pooled
            other.close()  # back in the pool, used a moment ago
            ending = (select(func.pg_terminate_backend(func.pg_backend_pid())), {})  # the backend ends itself
            read_together(core(session), [_STATEMENTS[0], ending, _STATEMENTS[3]])
        assert raised.value.connection_invalidated
        with database.engine.connect() as first, database.engine.connect() as second:  # (the pool's two)
            assert pooled not in (first.connection.driver_connection, second.connection.driver_connection)
        with database.session() as session:
            assert read_together(core(session), _STATEMENTS)[0][0].value == 3.0


def test_a_parameter_the_statement_does_not_take_is_refused(database) -> None:
    """SQLAlchemy's own execute would add a column named by an extra parameter to an UPDATE's SET; read together,
    the statement goes as compiled (in a pipeline on PostgreSQL, on the driver's cursor on SQLite), so the parameter
    is refused rather than dropped silently."""
    with database.session() as session, pytest.raises(ValueError, match="oops"):
        read_together(core(session), [(_BUMP, {"which": "a", "by": 1.0, "oops": 2}), _STATEMENTS[2]])
