"""Core statements compiled once and run on the driver's cursor: the worker's record without SQLAlchemy's
execution machinery around each statement.

SQLAlchemy's ``Connection.execute`` of a cached statement still builds the statement's cache key, an
execution context and a result for every call; on a worker's record (a match's seal, its deal's read, the
recorders' writes of a publication) that cost more of the worker's CPU than SQLite's work on the statements
(``bench.worker_loop``). A ``Plan`` holds what SQLAlchemy would send, worked out once per statement and
dialect: the compiled SQL, the bind processors of its parameters' types, the result processors of its
columns. ``read_together`` sends plans in one pipeline on PostgreSQL; on SQLite they run in turn here.

Either way the engine's ``before_cursor_execute`` and ``after_cursor_execute`` listeners hear each statement,
as they would from SQLAlchemy (tests and benchmarks count and trace statements by them), its statement log
(``echo``) shows each with its parameters, as SQLAlchemy's execute would, and a driver's error
is raised as SQLAlchemy's own (``IntegrityError``, ``OperationalError``, ...; a lost connection invalidated, as
SQLAlchemy invalidates it: ``driver_error``). A statement that needs what
SQLAlchemy adds as it executes it (a Python-side column default) has no plan.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql.expression import Executable


class NoPlan(ValueError):
    """The statement needs SQLAlchemy's own execution (a Python-side default, a parameter it does not take)."""


def rows_in_turn(connection: Connection, statement: Executable, params: Mapping[str, Any]) -> list[Any]:
    """One statement's rows, its plan run on the driver's cursor in the connection's transaction."""
    _begun(connection)
    plan = plan_for(connection, statement)
    sql, arguments = plan.call(params)
    with _DriverCursor(connection, sql, arguments, many=False) as cursor:
        cursor.execute(sql, arguments)
        return plan.rows(cursor)


def driver_sql(connection: Connection, sql: str) -> None:
    """``connection.exec_driver_sql(sql)`` for a statement without parameters or rows (SQLite's BEGIN), as the
    statements here are run: an empty write unit of work took 62-63 us so, 70-74 through SQLAlchemy."""
    with _DriverCursor(connection, sql, (), many=False) as cursor:
        cursor.execute(sql)


def write(connection: Connection, statement: Executable, rows: Sequence[Mapping[str, Any]]) -> None:
    """``connection.execute(statement, rows)`` for a write whose outcome nobody reads (no rows, no rowcount),
    every row with the same keys (naming columns, as SQLAlchemy takes them): one ``executemany`` of the
    statement's plan. On PostgreSQL inside ``db.pipelined`` it joins the pipeline, as SQLAlchemy's execute
    would, and a failure is known later (``pipelined`` says when); a worker's CPU outside ``play_match`` on
    PostgreSQL went from 2.65-2.95 to 2.46-2.58 ms a match (docs/benchmarks.md, twentieth session)."""
    if not rows:
        return
    try:
        plan = plan_for(connection, statement, tuple(sorted(rows[0])))
        arguments = None if plan.expands else [plan.call(row)[1] for row in rows]
    except NoPlan:  # (SQLAlchemy's own execute fills the defaults in, or says what is wrong)
        arguments = None
    if arguments is not None:
        _begun(connection)
        with _DriverCursor(connection, plan.compiled.string, arguments, many=True) as cursor:
            cursor.executemany(plan.compiled.string, arguments)
        return
    connection.execute(statement, list(rows) if len(rows) > 1 else rows[0])


def _begun(connection: Connection) -> None:
    """The transaction SQLAlchemy's execute would begin first (its autobegin), begun: on the driver's cursor a
    connection that has run nothing yet would write outside any transaction (SQLite's driver is in autocommit
    mode: ``db._sqlite_pragmas``), and a rollback would not undo it."""
    if not connection.in_transaction():
        connection.begin()


class _DriverCursor:
    """A driver cursor for one statement: the listeners told before and after, the driver's error raised as
    SQLAlchemy's, the cursor closed."""

    def __init__(self, connection: Connection, sql: str, arguments: Any, many: bool) -> None:
        self.connection, self.sql, self.arguments, self.many = connection, sql, arguments, many
        self.dbapi = connection.dialect.loaded_dbapi
        self.cursor = connection.connection.dbapi_connection.cursor()  # type: ignore[union-attr]

    def __enter__(self) -> Any:
        before_execute(self.connection, self.cursor, self.sql, self.arguments, self.many)
        return self.cursor

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, _tb: object) -> bool:
        try:
            if exc is None:
                self.connection.dispatch.after_cursor_execute(self.connection, self.cursor, self.sql, self.arguments,
                                                              None, self.many)
            elif isinstance(exc, self.dbapi.Error):
                raise driver_error(self.connection, exc, self.sql, self.arguments, self.cursor) from exc
            return False
        finally:
            self.cursor.close()


def before_execute(connection: Connection, cursor: Any, sql: str, arguments: Any, many: bool) -> None:
    """What SQLAlchemy's execute does before it sends a statement: the engine's ``before_cursor_execute``
    listeners told, then its statement log written (``echo``, or the ``sqlalchemy.engine`` logger at INFO: the
    SQL, and its parameters cut as SQLAlchemy cuts them)."""
    connection.dispatch.before_cursor_execute(connection, cursor, sql, arguments, None, many)
    if connection._echo:
        connection._log_info(sql)
        if arguments:
            connection._log_parameters(arguments, "compiled plan", ismulti=many)


def driver_error(connection: Connection, exc: BaseException, sql: str | None, arguments: Any,
                 cursor: Any = None) -> DBAPIError:
    """The driver's error as SQLAlchemy's own execute raises it. A lost connection (a database restart) is
    invalidated with the rest of its pool, as SQLAlchemy does, and the error says so (``connection_invalidated``:
    ``matches._once_more_if_lost`` runs the record once more on a new connection). Inside ``db.pipelined`` too:
    psycopg only logs the pipeline's end failing on the closed connection while this error goes up."""
    dialect = connection.dialect
    lost = bool(dialect.is_disconnect(exc, connection.connection.dbapi_connection, cursor))  # type: ignore[arg-type]
    if lost:
        invalidate_lost(connection, exc)
    return DBAPIError.instance(sql, arguments, exc, dialect.loaded_dbapi.Error, connection_invalidated=lost,
                               dialect=dialect)  # type: ignore[arg-type]


def invalidate_lost(connection: Connection, exc: BaseException | None = None) -> None:
    """What SQLAlchemy does on a lost connection: this one is invalidated, and the pool's others are replaced as
    they are next checked out (a restart ended them too)."""
    if not connection.invalidated:
        connection.engine.pool._invalidate(connection.connection, exc)  # type: ignore[arg-type]
        connection.invalidate(exc)  # type: ignore[arg-type]


def driver_piped(driver: Any, dbapi: Any) -> bool:
    """Whether the driver's connection is in psycopg's pipeline mode (``db.pipelined``); never SQLite's."""
    pgconn = getattr(driver, "pgconn", None)
    return pgconn is not None and bool(pgconn.pipeline_status != dbapi.pq.PipelineStatus.OFF)


@dataclass
class Plan:
    """A statement compiled once for a dialect (and, for a write, the columns its parameters name), with
    SQLAlchemy's bind and result processing."""

    statement: Executable  # (held: the cache is keyed by its id)
    compiled: Any
    binds: dict[str, Callable[[Any], Any]]  # by parameter name as sent, where the type has a processor
    expands: bool  # IN lists or literal values rendered as each call is sent
    takes: frozenset[str]  # the parameters' names
    refused: bool = False  # Python-side column defaults: SQLAlchemy must execute it (``NoPlan``)
    row: Any = field(default=None)  # the row class and the columns' result processors, made from the first
    results: list[Callable[[Any], Any] | None] = field(default_factory=list)  # answer's names and types

    def call(self, params: Mapping[str, Any]) -> tuple[str, dict[str, Any] | tuple[Any, ...]]:
        """The SQL and the driver's arguments for ``params``, as SQLAlchemy would send them (its IN lists
        expanded, its bind processors applied, to None too): by name, or in order for a positional paramstyle
        (SQLite's)."""
        unknown = params.keys() - self.takes
        if unknown:
            raise NoPlan(f"parameters the statement does not take: {sorted(unknown)}")
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


_plans: dict[tuple[int, int, tuple[str, ...] | None], Plan] = {}  # by the statement's and the dialect's ids, columns
_MOST_PLANS = 256


def plan_for(connection: Connection, statement: Executable, columns: tuple[str, ...] | None = None) -> Plan:
    """The statement's plan on this connection's dialect; ``columns``: the parameters' names, sorted, for a
    write whose parameters name the columns it sets (SQLAlchemy compiles an INSERT or UPDATE for them). Raises
    ``NoPlan`` for a statement with Python-side column defaults."""
    dialect = connection.dialect
    key = (id(statement), id(dialect), columns)
    plan = _plans.get(key)
    if plan is None or plan.statement is not statement or plan.compiled.dialect is not dialect:
        # (a write is always one executemany: compiled as one, an INSERT sends no RETURNING of the new ids that
        # nobody reads, as SQLAlchemy's own executemany leaves it out)
        compiled = statement.compile(dialect=dialect, column_keys=None if columns is None else list(columns),
                                     for_executemany=columns is not None)
        escaped = compiled.escaped_bind_names  # type: ignore[attr-defined]
        binds = {(name if compiled.positional else escaped.get(name, name)): process
                 for bind, name in compiled.bind_names.items()  # type: ignore[attr-defined]
                 if (process := bind.type.dialect_impl(dialect).bind_processor(dialect)) is not None}
        expands = bool(compiled.post_compile_params or compiled.literal_execute_params)  # type: ignore[attr-defined]
        if len(_plans) >= _MOST_PLANS:  # (statements built anew for each call would otherwise pile up here)
            _plans.clear()
        # (a refusal is kept too: a statement that always needs SQLAlchemy is not compiled again on each call)
        refused = bool(compiled.insert_prefetch or compiled.update_prefetch)  # type: ignore[attr-defined]
        plan = _plans[key] = Plan(statement, compiled, binds, expands, frozenset(compiled.binds), refused)
    if plan.refused:
        raise NoPlan("Python-side column defaults are SQLAlchemy's to fill in as it executes")
    return plan
