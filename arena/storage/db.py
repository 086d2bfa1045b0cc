"""The database handle: one engine per process, sessions per unit of work, migrations on start.

SQLite (the default) runs in WAL mode with a busy timeout so the web app and several workers can share
one file. On PostgreSQL a connection that cannot be made, or whose peer stops acknowledging what is sent
(a network partition), fails after ``timeout_s`` instead of the kernel's minutes: a web request then
answers "unavailable" at once, and a worker's lease keeper notices it is cut off.
"""

from __future__ import annotations

import select
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, Engine, create_engine, event, make_url
from sqlalchemy.exc import DBAPIError, DisconnectionError
from sqlalchemy.orm import Session, sessionmaker

from arena.storage.compiled_plans import driver_piped, driver_sql, invalidate_lost

MIGRATIONS = Path(__file__).with_name("migrations")
AUTOCOMMIT = "arena_autocommit"  # the execution option of ``Database.session(autocommit=True)`` on SQLite


def _sqlite_pragmas(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
    dbapi_connection.isolation_level = None  # SQLAlchemy's "begin" event below issues BEGIN itself
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _sqlite_begin(conn) -> None:  # type: ignore[no-untyped-def]
    """Writers take the write lock at BEGIN (IMMEDIATE): a read-then-write transaction can then never
    fail on a snapshot that another writer made stale. Read-only units of work begin DEFERRED and, in
    WAL mode, never wait for writers; autocommit ones begin nothing (each statement is its own)."""
    options = conn.get_execution_options()
    if options.get(AUTOCOMMIT):  # the driver is in autocommit mode already (``_sqlite_pragmas``)
        return
    mode = "DEFERRED" if options.get("readonly") else "IMMEDIATE"
    driver_sql(conn, f"BEGIN {mode}")  # (on the driver's cursor: SQLAlchemy's execution costs more than BEGIN)


def _postgres_timeouts(timeout_s: float, url: str = "") -> dict[str, int | str]:
    """libpq options: give up connecting after ``timeout_s``; drop a connection whose sent data goes
    unacknowledged that long (``tcp_user_timeout``, which also bounds the pool's ping at checkout); probe idle
    ones with keepalives. A query may still run as long as it needs: only silence from the peer counts.

    The server is asked for the same on its side of each connection (``options``): a client cut off in
    the middle of a transaction (a partitioned worker host) otherwise left its backend idle in
    transaction, holding its row locks (the ladder rows a tick locks, a leaderboard's lock), until the
    server's kernel gave up on the peer: two hours of keepalive silence by default. Now it is ended
    about ``timeout_s`` + 3 probes later, and whoever waits on those locks goes on."""
    seconds = max(1, round(timeout_s))
    interval = max(1, seconds // 2)
    server = {"tcp_keepalives_idle": seconds, "tcp_keepalives_interval": interval, "tcp_keepalives_count": 3,
              "tcp_user_timeout": seconds * 1000}
    return {"connect_timeout": seconds, "tcp_user_timeout": seconds * 1000, "keepalives": 1,
            "keepalives_idle": seconds, "keepalives_interval": interval, "keepalives_count": 3,
            "options": " ".join([*_url_options(url), *(f"-c {name}={value}" for name, value in server.items())])}


def _url_options(url: str) -> list[str]:
    """The ``options`` the URL gives already (a schema's search path): kept, ours are added after."""
    given = make_url(url).query.get("options") if url else None
    return list(given) if isinstance(given, tuple) else [given] if given else []


RECENT_S = 1.0  # a pooled connection back from its last use this recently is checked by its socket alone
_RETURNED = "arena_returned_at"  # the pool record's note of when the connection came back (``time.monotonic``)


def _returned(_dbapi_connection, record) -> None:  # type: ignore[no-untyped-def]
    record.info[_RETURNED] = time.monotonic()


def _alive_at_checkout(dialect: Any) -> Any:
    """The pool's check of a PostgreSQL connection it hands out, in place of ``pool_pre_ping``'s round trip on
    every checkout (70 us of the client's CPU and 120 us of wall here; a worker checks out two a match).

    A connection back from its last use less than ``RECENT_S`` ago whose socket has nothing to read is taken
    as alive: a server that ended it (a restart, ``pg_terminate_backend``) said so and closed it, and one the
    kernel gave up on reads as an error, both at once; and no peer drops a connection after less than a
    second of silence (``_postgres_timeouts``: the server's keepalive gives up after ``timeout_s`` >= 1 s and
    three probes). Any other connection gets the round trip: one idle longer may have been dropped by a server
    whose goodbye was lost in a network cut, to be answered with a reset only once something is sent. A
    connection that fails it is replaced by a new one (SQLAlchemy's ``DisconnectionError`` from a checkout).
    What the socket cannot tell: a server gone without a goodbye within that second (its host crashed, a
    failover moved its address). The first statement then fails and the pool is invalidated; a worker tries its
    claim or record once more (``matches._once_more_if_lost``), other units of work fail once (a page: 503)."""
    def check(dbapi_connection, record, _proxy) -> None:  # type: ignore[no-untyped-def]
        if dbapi_connection.closed or dbapi_connection.broken:
            raise DisconnectionError("the connection was closed")
        returned = record.info.get(_RETURNED)
        try:
            if returned is not None and time.monotonic() - returned < RECENT_S and not _readable(dbapi_connection):
                return
            dialect.do_ping(dbapi_connection)
        except Exception as exc:
            raise DisconnectionError(f"the connection failed its check: {exc}") from exc

    return check


def _readable(dbapi_connection: Any) -> bool:
    """Whether an idle connection's socket has something to read (a goodbye, an error, an end of file)."""
    poller = select.poll()  # (not select.select: a process with many files may hand out a descriptor > 1023)
    poller.register(dbapi_connection.pgconn.socket, select.POLLIN | select.POLLERR | select.POLLHUP)
    return bool(poller.poll(0))


class Database:
    """Engine + session factory for one database URL."""

    def __init__(self, url: str, echo: bool = False, timeout_s: float = 5) -> None:
        self.url = url
        kwargs: dict = {"echo": echo, "future": True}
        if url.startswith("sqlite"):
            path = url.split("///", 1)[-1]
            if path and path != ":memory:":
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            kwargs["connect_args"] = {"timeout": 30, "check_same_thread": False}
        else:
            # The most recently returned connection first (LIFO): a worker's next checkout then finds the one it
            # used a moment ago, which needs no round trip to check (``_alive_at_checkout``).
            kwargs.update(pool_size=5, max_overflow=10, pool_use_lifo=True,
                          connect_args=_postgres_timeouts(timeout_s, url))
        self.engine: Engine = create_engine(url, **kwargs)
        if url.startswith("sqlite"):
            event.listen(self.engine, "connect", _sqlite_pragmas)
            event.listen(self.engine, "begin", _sqlite_begin)
        else:
            event.listen(self.engine, "connect", _returned)  # (a new connection needs no ping either)
            event.listen(self.engine, "checkin", _returned)
            event.listen(self.engine, "checkout", _alive_at_checkout(self.engine.dialect))
        self.sessions = sessionmaker(self.engine, expire_on_commit=False)
        self.read_sessions = sessionmaker(self.engine.execution_options(readonly=True), expire_on_commit=False)
        # SQLite's driver runs in autocommit mode and a transaction is our BEGIN (``_sqlite_begin``), which this
        # option leaves out; PostgreSQL's is told (and set back when the connection returns to the pool).
        autocommit = {AUTOCOMMIT: True} if url.startswith("sqlite") else {"isolation_level": "AUTOCOMMIT"}
        self._autocommit_engine = self.engine.execution_options(**autocommit)
        self.autocommit_sessions = sessionmaker(self._autocommit_engine, expire_on_commit=False)

    @contextmanager
    def session(self, readonly: bool = False, autocommit: bool = False) -> Iterator[Session]:
        """A unit of work: commits on success, rolls back on any error. ``readonly`` units never take
        SQLite's write lock (pages and GET requests use them). ``autocommit``: no transaction, each
        statement stands alone (a worker's claim: one atomic UPDATE), which saves the
        BEGIN and COMMIT round trips of a unit that needs neither."""
        session = (self.autocommit_sessions if autocommit else self.read_sessions if readonly else self.sessions)()
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise
        finally:
            session.close()

    @contextmanager
    def autocommit(self) -> Iterator[Connection]:
        """A connection on which each statement stands alone, without an ORM session: a worker's claim (one
        atomic UPDATE, 60 us of CPU less than in a session here)."""
        with self._autocommit_engine.connect() as connection:
            yield connection

    def migrate(self) -> None:
        """Bring the schema up to the newest migration (idempotent)."""
        with self.engine.begin() as connection:
            config = alembic_config(self.url)
            config.attributes["connection"] = connection
            command.upgrade(config, "head")

    def dispose(self) -> None:
        self.engine.dispose()


def core(session: Session) -> Connection:
    """The session's connection, for Core statements on a hot path (a worker's claim and record): the ORM's
    per-statement work (its compile state, result loading, autoflush) costs more than the statement
    itself there. What the session has pending is flushed first, as its own ``execute`` would."""
    if session.new or session.dirty or session.deleted:
        session.flush()
    return session.connection()


@contextmanager
def pipelined(session: Session | Connection) -> Iterator[None]:
    """Writes whose results nobody reads, sent without waiting for each one's answer: on PostgreSQL in
    psycopg's pipeline mode, one round trip for all of them where each took one (a deal's publication:
    four statements of three recorders, every other match on a worker); elsewhere they run as they come.

    Nothing of a statement's outcome can be read inside: a SELECT's rows fail loudly, but an UPDATE's
    ``rowcount`` is -1, silently, so only writes that nobody checks belong in one. A statement that fails is
    known only later: raised at the block's next statement (as SQLAlchemy's error naming that statement,
    the driver's error being the failed one's) or as the block ends (here, as SQLAlchemy's error, the
    connection invalidated if it was lost or could not leave pipeline mode); either way its transaction is
    aborted. Without pipeline support in the driver's libpq (older than 14) the block runs as it comes. Inside
    another block, one of its own adds nothing: its statements join the outer block's pipeline."""
    connection = session if isinstance(session, Connection) else core(session)  # (a session flushed first)
    if not pipelines(connection):
        yield
        return
    dbapi = connection.dialect.loaded_dbapi
    driver = connection.connection.dbapi_connection
    if driver_piped(driver, dbapi):  # (psycopg's own nesting would sync here)
        yield
        return
    try:
        with driver.pipeline():  # type: ignore[union-attr]
            yield
    except dbapi.Error as exc:
        lost = _unusable(driver, dbapi) or connection.dialect.is_disconnect(exc, driver, None)
        if lost:  # as SQLAlchemy's own execute does: the pool's other connections may be as dead (a restart)
            invalidate_lost(connection, exc)
        raise DBAPIError.instance(None, None, exc, dbapi.Error, connection_invalidated=lost,
                                  dialect=connection.dialect) from exc
    except BaseException as exc:  # the block's own error: psycopg only logs an exit that failed after it
        if _unusable(driver, dbapi):
            invalidate_lost(connection, exc)
        raise


def pipelines(connection: Connection) -> bool:
    """Whether ``pipelined`` sends its statements together on this connection (PostgreSQL, libpq 14 or newer)."""
    return connection.dialect.name == "postgresql" and bool(connection.dialect.loaded_dbapi.Pipeline.is_supported())


def in_pipeline(connection: Connection) -> bool:
    """Whether the connection is inside a ``pipelined`` block (where nothing can be read)."""
    return driver_piped(connection.connection.dbapi_connection, connection.dialect.loaded_dbapi)


def _unusable(driver: Any, dbapi: Any) -> bool:
    """Lost, or still in pipeline mode after the block ("cannot exit pipeline mode while busy", seen when the
    backend ends mid-sync): either way not even the ROLLBACK can be sent on it. An error the server raised at
    the sync (a deadlock, a timeout) leaves it usable: the transaction is only aborted."""
    return bool(driver.broken or driver.closed or driver_piped(driver, dbapi))


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config
