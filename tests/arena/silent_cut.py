"""A TCP relay to PostgreSQL that drops its connections as a server behind a network cut does (the server's side
ended, the client told nothing until it sends something, which is answered with a reset), and a Database that
reaches a test's schema through it. For what a pooled connection cannot tell by its socket."""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import quote

from sqlalchemy import make_url

from arena.storage.db import Database
from tests.arena.conftest import POSTGRES_URL


class SilentCut:
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
def through(cut: SilentCut, database: Database) -> Iterator[Database]:
    """The same database (its schema), reached through the relay."""
    url = make_url(POSTGRES_URL).set(host="127.0.0.1", port=cut.port)
    schema = database.engine.url.query["options"]
    relayed = Database(f"{url.render_as_string(hide_password=False)}?options={quote(str(schema))}")
    try:
        yield relayed
    finally:
        relayed.dispose()


def to_postgres() -> SilentCut:
    """A relay to the tests' PostgreSQL server."""
    pg = make_url(POSTGRES_URL)
    return SilentCut((pg.host or "127.0.0.1", pg.port or 5432))
