"""arena.storage.db's check of a PostgreSQL connection the pool hands out: by its socket when it came back a
moment ago, by a round trip otherwise, and a dead one replaced either way (no unit of work fails on it)."""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import quote

import pytest
from sqlalchemy import create_engine, make_url, text

from arena.storage import db as db_module
from arena.storage.db import Database
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


def test_a_connection_back_a_moment_ago_is_handed_out_without_a_round_trip(pinged) -> None:  # type: ignore[no-untyped-def]
    database, pings = pinged
    first = _backend(database)
    assert [_backend(database) for _ in range(5)] == [first] * 5  # the same connection (LIFO), kept
    assert pings == []


def test_a_connection_idle_longer_gets_a_round_trip(pinged, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    database, pings = pinged
    first = _backend(database)
    monkeypatch.setattr(db_module, "RECENT_S", 0.0)  # (as if it had waited in the pool longer than that)
    assert _backend(database) == first
    assert pings == [1]


def test_a_connection_whose_backend_ended_is_replaced_at_checkout(pinged) -> None:  # type: ignore[no-untyped-def]
    """A database restart, as a pooled connection sees it: the server ended it and said so. The next unit
    of work gets a new connection instead of failing on the old one (what ``pool_pre_ping`` gave)."""
    database, pings = pinged
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


class _SilentCut:
    """A TCP relay to PostgreSQL that can drop its connections as a server behind a network cut does: the
    server's side ended, the client told nothing until it sends something, which is answered with a reset."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.pairs: list[tuple[socket.socket, socket.socket]] = []
        self.dropped: set[socket.socket] = set()  # client sides whose server side was ended
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.upstream)
            self.pairs.append((client, server))
            threading.Thread(target=self._pump, args=(client, server, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, False), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, from_client: bool) -> None:
        while True:
            try:
                data = source.recv(65536)
            except OSError:
                return
            if not data:
                return
            if from_client and source in self.dropped:  # the server forgot it: a reset, as a real one answers
                source.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                source.close()
                return
            try:
                sink.sendall(data)
            except OSError:
                return

    def drop_silently(self) -> None:
        """End every relayed connection on the server's side only; new connections go through again."""
        for client, server in self.pairs:
            self.dropped.add(client)
            server.close()  # the backend ends; its goodbye is not passed on to the client

    def close(self) -> None:
        self.listener.close()
        for client, server in self.pairs:
            client.close()
            server.close()


@contextmanager
def _through(cut: _SilentCut, database: Database) -> Iterator[Database]:
    """The same database (its schema), reached through the relay."""
    url = make_url(POSTGRES_URL).set(host="127.0.0.1", port=cut.port)
    schema = database.engine.url.query["options"]
    relayed = Database(f"{url.render_as_string(hide_password=False)}?options={quote(str(schema))}")
    try:
        yield relayed
    finally:
        relayed.dispose()


def test_a_connection_dropped_silently_while_idle_is_replaced_at_checkout(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Why a connection idle longer than ``RECENT_S`` still gets the round trip: the server may have ended it
    while a cut kept its goodbye from arriving (its keepalive gave up), and its socket then shows nothing."""
    pg = make_url(POSTGRES_URL)
    cut = _SilentCut((pg.host or "127.0.0.1", pg.port or 5432))
    try:
        with postgres_database() as database, _through(cut, database) as relayed:
            first = _backend(relayed)
            cut.drop_silently()
            record = relayed.engine.pool._pool.queue[-1]
            assert not db_module._readable(record.dbapi_connection)  # nothing tells the pool it is gone
            monkeypatch.setattr(db_module, "RECENT_S", 0.0)  # (as if it had waited in the pool that long)
            assert _backend(relayed) != first
    finally:
        cut.close()
