"""Several statements' rows in one round trip: what a worker's record reads, asked for at once.

On PostgreSQL each statement run through SQLAlchemy waits for its answer before the next is sent: a round
trip each, and the database's work on one is never overlapped with the worker's on the next. psycopg's
pipeline mode sends them all and collects their answers together, but SQLAlchemy cannot hand back rows
from it (it builds a result before the answer has come). ``read_together`` therefore sends SQLAlchemy's own
compiled SQL, with the parameters and type processing SQLAlchemy would apply, on the driver's cursors in one
pipeline (``db.pipelined``: its errors, and a lost connection invalidated), and hands back each statement's rows
(``compiled_plans``). On SQLite, which has no round trips, the same plans run in turn on the driver's cursor:
SQLAlchemy's own execution of a statement cost the worker more CPU than SQLite's work on it (a Piranha Pedro
match's record read its three statements in 405-429 us of the worker's CPU through SQLAlchemy, 282-283 so:
``bench.worker_loop``). A statement alone, or a libpq without pipelines, runs through SQLAlchemy.

Either way the engine's ``before_cursor_execute`` and ``after_cursor_execute`` listeners hear each statement, as
they would from SQLAlchemy (tests and benchmarks count and trace statements by them), and its statement log
(``echo``) shows each (``compiled_plans.before_execute``); in a pipeline every
answer comes at the end, so an "after" there says when the answers were in, not when that one was.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql.expression import Executable

from arena.storage.compiled_plans import before_execute, plan_for, rows_in_turn
from arena.storage.db import in_pipeline, pipelined, pipelines

Statement = tuple[Executable, Mapping[str, Any]]


def read_together(connection: Connection, statements: Sequence[Statement]) -> list[list[Any]]:
    """The rows of each of ``statements`` (each a Core statement and its parameters), run in order in the
    connection's transaction; a row reads like SQLAlchemy's (by position and by column name). In a pipeline,
    statements that need what SQLAlchemy adds as it executes them (Python-side defaults, parameters naming
    columns the statement does not set) are refused, loudly."""
    if len(statements) >= 2 and connection.dialect.name == "sqlite":
        return [rows_in_turn(connection, statement, params) for statement, params in statements]
    if len(statements) < 2 or not pipelines(connection):  # (one alone: nothing to save)
        return [list(connection.execute(statement, dict(params))) for statement, params in statements]
    if in_pipeline(connection):  # (its answers would come only as the outer block ends)
        raise ValueError("read_together inside a pipelined block: nothing can be read there")
    driver = connection.connection.dbapi_connection
    sent = []
    with pipelined(connection):
        for statement, params in statements:
            plan = plan_for(connection, statement)
            sql, arguments = plan.call(params)
            cursor = driver.cursor()  # type: ignore[union-attr]
            sent.append((plan, cursor, sql, arguments))
            before_execute(connection, cursor, sql, arguments, many=False)
            cursor.execute(sql, arguments)
    dbapi = connection.dialect.loaded_dbapi
    answers = []
    try:
        for plan, cursor, sql, arguments in sent:
            connection.dispatch.after_cursor_execute(connection, cursor, sql, arguments, None, False)
            answers.append(plan.rows(cursor))
    except dbapi.Error as exc:  # (a value the driver cannot load: SQLAlchemy's error, as for its own reads)
        raise DBAPIError.instance(None, None, exc, dbapi.Error, dialect=connection.dialect) from exc
    finally:
        for sending in sent:
            sending[1].close()
    return answers
