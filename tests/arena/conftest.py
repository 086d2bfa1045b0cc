"""Service fixtures: a fresh database per test on SQLite and on PostgreSQL, the web app around it, and
a Redis database of its own."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import quote

import pytest
from sqlalchemy import create_engine, text

from arena.composition import Context
from arena.config import Settings, load_settings
from arena.runtime.queue import MatchQueue, connect
from arena.storage.db import Database

POSTGRES_URL = os.environ.get("ARENA_TEST_DATABASE_URL",
                              "postgresql+psycopg://postgres:postgres@127.0.0.1:5432/test")
REDIS_URL = os.environ.get("ARENA_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


def _redis_url_for_worker() -> str:
    """One Redis database per pytest-xdist worker, so parallel runs never share keys."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    index = int(worker[2:]) if worker[2:].isdigit() else 0
    base, _, _db = REDIS_URL.rpartition("/")
    return f"{base}/{15 - index}"


@contextmanager
def postgres_database(url: str = POSTGRES_URL) -> Iterator[Database]:
    """A migrated, empty PostgreSQL database: a schema of its own, dropped afterwards (the tests' and
    the benchmarks' one way to get a fresh PostgreSQL database)."""
    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(url)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    separator = "&" if "?" in url else "?"
    db = Database(f"{url}{separator}options={quote(f'-csearch_path={schema}')}")
    db.migrate()
    try:
        yield db
    finally:
        db.dispose()
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


def end_backend(database: Database, session: Any) -> int:
    """End the PostgreSQL backend serving ``session`` (a Session or a Connection), from another connection (a
    database restart, as it sees), and wait until it is gone; returns its process id."""
    pid = session.connection().connection.driver_connection.info.backend_pid
    with database.engine.connect() as admin:
        admin.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
        admin.commit()
        for _ in range(500):
            if not admin.scalar(text("SELECT count(*) FROM pg_stat_activity WHERE pid = :pid"), {"pid": pid}):
                break
            time.sleep(0.01)
    return pid


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request, tmp_path) -> Iterator[Database]:
    """A migrated, empty database: a SQLite file, or a PostgreSQL schema of its own."""
    if request.param == "sqlite":
        db = Database(f"sqlite:///{tmp_path / 'arena.db'}")
        db.migrate()
        yield db
        db.dispose()
        return
    with postgres_database() as db:
        yield db


@pytest.fixture
def redis_url() -> Iterator[str]:
    url = _redis_url_for_worker()
    client = connect(url)
    client.flushdb()
    yield url
    client.flushdb()
    client.close()


@pytest.fixture
def settings(tmp_path) -> Settings:
    return load_settings({}, env="test", data_dir=tmp_path, secret_key="test-secret", rate_limits=False,
                         allow_loopback_bots=True, match_lease_s=3, reconcile_interval_s=1, decision_ms=2000)


@pytest.fixture
def context(database: Database, settings: Settings) -> Context:
    return Context(settings=settings, db=database, queue=None)


@pytest.fixture
def queued_context(database: Database, settings: Settings, redis_url: str) -> Iterator[Context]:
    from dataclasses import replace

    settings = replace(settings, redis_url=redis_url)
    queue = MatchQueue(connect(redis_url), settings)
    yield Context(settings=settings, db=database, queue=queue)
    queue.close()  # not left to the collector: tests/arena/test_queue.py's make_queue says why


@pytest.fixture
def app(context: Context):
    from arena.web import create_app

    return create_app(context=context)


@pytest.fixture
def client(app):
    return app.test_client()
