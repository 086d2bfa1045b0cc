"""The database handle: one engine per process, sessions per unit of work, migrations on start.

SQLite (the default) runs in WAL mode with a busy timeout so the web app and several workers can share
one file. On PostgreSQL a connection that cannot be made, or whose peer stops acknowledging what is sent
(a network partition), fails after ``timeout_s`` instead of the kernel's minutes: a web request then
answers "unavailable" at once, and a worker's lease keeper notices it is cut off.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

MIGRATIONS = Path(__file__).with_name("migrations")


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
    WAL mode, never wait for writers."""
    mode = "DEFERRED" if conn.get_execution_options().get("readonly") else "IMMEDIATE"
    conn.exec_driver_sql(f"BEGIN {mode}")


def _postgres_timeouts(timeout_s: float) -> dict[str, int]:
    """libpq options: give up connecting after ``timeout_s``; drop a connection whose sent data goes
    unacknowledged that long (``tcp_user_timeout``, which also bounds the pool's pre-ping); probe idle
    ones with keepalives. A query may still run as long as it needs: only silence from the peer counts."""
    seconds = max(1, round(timeout_s))
    return {"connect_timeout": seconds, "tcp_user_timeout": seconds * 1000, "keepalives": 1,
            "keepalives_idle": seconds, "keepalives_interval": max(1, seconds // 2), "keepalives_count": 3}


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
            kwargs.update(pool_pre_ping=True, pool_size=5, max_overflow=10, connect_args=_postgres_timeouts(timeout_s))
        self.engine: Engine = create_engine(url, **kwargs)
        if url.startswith("sqlite"):
            event.listen(self.engine, "connect", _sqlite_pragmas)
            event.listen(self.engine, "begin", _sqlite_begin)
        self.sessions = sessionmaker(self.engine, expire_on_commit=False)
        self.read_sessions = sessionmaker(self.engine.execution_options(readonly=True), expire_on_commit=False)

    @contextmanager
    def session(self, readonly: bool = False) -> Iterator[Session]:
        """A unit of work: commits on success, rolls back on any error. ``readonly`` units never take
        SQLite's write lock (pages and GET requests use them)."""
        session = (self.read_sessions if readonly else self.sessions)()
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise
        finally:
            session.close()

    def migrate(self) -> None:
        """Bring the schema up to the newest migration (idempotent)."""
        with self.engine.begin() as connection:
            config = alembic_config(self.url)
            config.attributes["connection"] = connection
            command.upgrade(config, "head")

    def dispose(self) -> None:
        self.engine.dispose()


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config
