"""Several statements' rows in one round trip: what a worker's record reads, asked for at once.

On PostgreSQL each statement run through SQLAlchemy waits for its answer before the next is sent: a round
trip each, and the database's work on one is never overlapped with the worker's on the next. psycopg's
pipeline mode sends them all and collects their answers together, but SQLAlchemy cannot hand back rows
from it (it builds a result before the answer has come). ``read_together`` therefore sends SQLAlchemy's own
compiled SQL, with the parameters and type processing SQLAlchemy would apply, on the driver's cursors in one
pipeline (``db.pipelined``: its errors, and a lost connection invalidated), and hands back each statement's rows.
On SQLite, which has no round trips, the same compiled plans run in turn on the driver's cursor: SQLAlchemy's own
execution of a statement cost the worker more CPU than SQLite's work on it (a Piranha Pedro match's record read
its three statements in 405 us of the worker's CPU through SQLAlchemy, 287 us so: ``bench.worker_loop``).
A statement alone, or a libpq without pipelines, runs through SQLAlchemy.

Either way the engine's ``before_cursor_execute`` and ``after_cursor_execute`` listeners hear each statement, as
they would from SQLAlchemy (tests and benchmarks count and trace statements by them); in a pipeline every
answer comes at the end, so an "after" there says when the answers were in, not when that one was.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql.expression import Executable

from arena.storage.db import in_pipeline, pipelined, pipelines

Statement = tuple[Executable, Mapping[str, Any]]


def read_together(connection: Connection, statements: Sequence[Statement]) -> list[list[Any]]:
    """The rows of each of ``statements`` (each a Core statement and its parameters), run in order in the
    connection's transaction; a row reads like SQLAlchemy's (by position and by column name). In a pipeline,
    statements that need what SQLAlchemy adds as it executes them (Python-side defaults, parameters naming
    columns the statement does not set) are refused, loudly."""
    if len(statements) < 2:  # (one alone: nothing to save)
        return [list(connection.execute(statement, dict(params))) for statement, params in statements]
    if connection.dialect.name == "sqlite":
        return [_in_turn(connection, statement, params) for statement, params in statements]
    if not pipelines(connection):
        return [list(connection.execute(statement, dict(params))) for statement, params in statements]
    if in_pipeline(connection):  # (its answers would come only as the outer block ends)
        raise ValueError("read_together inside a pipelined block: nothing can be read there")
    driver = connection.connection.dbapi_connection
    sent = []
    with pipelined(connection):
        for statement, params in statements:
            plan = _plan(connection, statement)
            sql, arguments = plan.call(params)
            cursor = driver.cursor()  # type: ignore[union-attr]
            sent.append((plan, cursor, sql, arguments))
            connection.dispatch.before_cursor_execute(connection, cursor, sql, arguments, None, False)
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


def _in_turn(connection: Connection, statement: Executable, params: Mapping[str, Any]) -> list[Any]:
    """One statement's rows, its plan run on the driver's cursor (in the connection's transaction); a failure is
    SQLAlchemy's error for it, as from SQLAlchemy's own execute."""
    plan = _plan(connection, statement)
    sql, arguments = plan.call(params)
    cursor = connection.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
    dbapi = connection.dialect.loaded_dbapi
    try:
        connection.dispatch.before_cursor_execute(connection, cursor, sql, arguments, None, False)
        try:
            cursor.execute(sql, arguments)
            rows = plan.rows(cursor)
        except dbapi.Error as exc:
            raise DBAPIError.instance(sql, arguments, exc, dbapi.Error, dialect=connection.dialect) from exc
        connection.dispatch.after_cursor_execute(connection, cursor, sql, arguments, None, False)
        return rows
    finally:
        cursor.close()


@dataclass
class _Plan:
    """A statement compiled once for a dialect, with SQLAlchemy's bind and result processing."""

    statement: Executable  # (held: the cache is keyed by its id)
    compiled: Any
    binds: dict[str, Callable[[Any], Any]]  # by parameter name as sent, where the type has a processor
    expands: bool  # IN lists or literal values rendered as each call is sent
    takes: frozenset[str]  # the parameters' names
    row: Any = field(default=None)  # the row class and the columns' result processors, made from the first
    results: list[Callable[[Any], Any] | None] = field(default_factory=list)  # answer's names and types

    def call(self, params: Mapping[str, Any]) -> tuple[str, dict[str, Any] | tuple[Any, ...]]:
        """The SQL and the driver's arguments for ``params``, as SQLAlchemy would send them (its IN lists
        expanded, its bind processors applied, to None too): by name, or in order for a positional paramstyle
        (SQLite's)."""
        unknown = params.keys() - self.takes
        if unknown:
            raise ValueError(f"read_together: parameters the statement does not take: {sorted(unknown)}")
        compiled, positional = self.compiled, self.compiled.positional
        if self.expands:
            state = compiled.construct_expanded_state(dict(params), escape_names=not positional)
            sql, values, processors = state.statement, state.parameters, {**self.binds, **state.processors}
            order = state.positiontup
        else:  # (the common case, for a third of the cost)
            sql, values, processors = (compiled.string, compiled.construct_params(dict(params),
                                                                                  escape_names=not positional),
                                       self.binds)
            order = compiled.positiontup
        for name, process in processors.items():
            if name in values:
                values[name] = process(values[name])
        return sql, (tuple(values[name] for name in order) if positional else values)

    def rows(self, cursor: Any) -> list[Any]:
        if cursor.description is None:
            return []
        if self.row is None:
            dialect = self.compiled.dialect
            # (a description's columns are sequences: name first, type code second; psycopg's also name them)
            self.results = [column.type.dialect_impl(dialect).result_processor(dialect, described[1])
                            for column, described in zip(self.statement.exported_columns,  # type: ignore[attr-defined]
                                                         cursor.description, strict=True)]
            self.row = collections.namedtuple("Row", [described[0] for described in cursor.description],  # type: ignore[misc]
                                              rename=True)
        processors = self.results
        return [self.row(*(value if process is None or value is None else process(value)
                           for process, value in zip(processors, values, strict=True)))
                for values in cursor.fetchall()]


_plans: dict[tuple[int, int], _Plan] = {}  # by the statement's and the dialect's ids
_MOST_PLANS = 256


def _plan(connection: Connection, statement: Executable) -> _Plan:
    dialect = connection.dialect
    key = (id(statement), id(dialect))
    plan = _plans.get(key)
    if plan is None or plan.statement is not statement or plan.compiled.dialect is not dialect:
        compiled = statement.compile(dialect=dialect)
        if compiled.insert_prefetch or compiled.update_prefetch:  # type: ignore[attr-defined]
            raise ValueError("read_together: Python-side column defaults are SQLAlchemy's to fill in as it executes")
        escaped = compiled.escaped_bind_names  # type: ignore[attr-defined]
        binds = {(name if compiled.positional else escaped.get(name, name)): process
                 for bind, name in compiled.bind_names.items()  # type: ignore[attr-defined]
                 if (process := bind.type.dialect_impl(dialect).bind_processor(dialect)) is not None}
        expands = bool(compiled.post_compile_params or compiled.literal_execute_params)  # type: ignore[attr-defined]
        if len(_plans) >= _MOST_PLANS:  # (statements built anew for each call would otherwise pile up here)
            _plans.clear()
        plan = _plans[key] = _Plan(statement, compiled, binds, expands, frozenset(compiled.binds))
    return plan
