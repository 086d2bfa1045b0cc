"""arena.storage.db's check of a PostgreSQL connection the pool hands out: by its socket when it came back a
moment ago, by a round trip otherwise, and a dead one replaced either way (no unit of work fails on it)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from sqlalchemy import create_engine, text

from arena.storage import db as db_module
from arena.storage.db import Database
from tests.arena import silent_cut
from tests.arena.conftest import POSTGRES_URL, postgres_database


def _backend(database: Database) -> int:
    with database.session() as session:
        return int(session.scalar(text("SELECT pg_backend_pid()")))


def _wait(condition, what: str, timeout_s: float = 5.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


@pytest.fixture
def pinged(monkeypatch) -> Iterator[tuple[Database, list[int]]]:  # type: ignore[no-untyped-def]
    """A PostgreSQL database whose checkout pings are counted."""
    with postgres_database() as database:
        pings: list[int] = []
        real = database.engine.dialect.do_ping

        def counting(dbapi_connection) -> bool:  # type: ignore[no-untyped-def]
            pings.append(1)
            return real(dbapi_connection)

        monkeypatch.setattr(database.engine.dialect, "do_ping", counting)
        yield database, pings


def test_a_connection_back_a_moment_ago_is_handed_out_without_a_round_trip(pinged, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    database, pings = pinged
    monkeypatch.setattr(db_module, "RECENT_S", 3600.0)  # ("a moment", however slowly this machine runs now)
    first = _backend(database)
    assert [_backend(database) for _ in range(5)] == [first] * 5  # the same connection (LIFO), kept
    assert pings == []


def test_a_connection_idle_longer_gets_a_round_trip(pinged, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    database, pings = pinged
    first = _backend(database)
    monkeypatch.setattr(db_module, "RECENT_S", 0.0)  # (as if it had waited in the pool longer than that)
    assert _backend(database) == first
    assert pings == [1]


def test_a_connection_whose_backend_ended_is_replaced_at_checkout(pinged, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A database restart, as a pooled connection sees it: the server ended it and said so. The next unit
    of work gets a new connection instead of failing on the old one (what ``pool_pre_ping`` gave), though it
    came back a moment ago: its socket tells."""
    database, pings = pinged
    monkeypatch.setattr(db_module, "RECENT_S", 3600.0)
    first = _backend(database)
    admin = create_engine(POSTGRES_URL)  # (not the pool's: it would hand out the very connection to end)
    with admin.begin() as connection:
        connection.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": first})
    admin.dispose()
    record = database.engine.pool._pool.queue[-1]  # (the ended connection, back in the pool)
    _wait(lambda: db_module._readable(record.dbapi_connection), "the server's goodbye to reach the pool")
    second = _backend(database)
    assert second != first
    assert pings == [1]  # the goodbye on its socket sent the ended one to the round trip, which failed


def test_a_connection_dropped_silently_while_idle_is_replaced_at_checkout(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Why a connection idle longer than ``RECENT_S`` still gets the round trip: the server may have ended it
    while a cut kept its goodbye from arriving (its keepalive gave up), and its socket then shows nothing."""
    cut = silent_cut.to_postgres()
    try:
        with postgres_database() as database, silent_cut.through(cut, database) as relayed:
            first = _backend(relayed)
            cut.drop_silently()
            record = relayed.engine.pool._pool.queue[-1]
            assert not db_module._readable(record.dbapi_connection)  # nothing tells the pool it is gone
            monkeypatch.setattr(db_module, "RECENT_S", 0.0)  # (as if it had waited in the pool that long)
            assert _backend(relayed) != first
    finally:
        cut.close()
