"""A stand-in for ``socket.create_connection`` in the referee's transport, and for ``socket.connect_ex`` (the
connections a batch opens ahead, ``referee.connect_ahead``): it records every attempt and refuses to connect
anywhere but loopback, so a test can assert that a refusal came before any connection (and that tests never
leave the machine)."""

from __future__ import annotations

import socket
from typing import Any

from referee.bot_client import BotClient
from referee.watchdog import Watchdog


class ConnectionSpy:
    def __init__(self) -> None:
        self.attempts: list[tuple[str, int]] = []  # every one
        self.ahead: list[tuple[str, int]] = []  # those made by ``connect_ex``: opened ahead of a match
        self.outside: list[tuple[str, int]] = []  # refused: not on loopback
        self.real = socket.create_connection
        self.real_connect_ex = socket.socket.connect_ex

    def __call__(self, address, *args, **kwargs):  # type: ignore[no-untyped-def]
        self._record(address)
        return self.real(address, *args, **kwargs)

    def connect_ex(self, sock: socket.socket, address):  # type: ignore[no-untyped-def]
        self._record(address)
        self.ahead.append(address)
        return self.real_connect_ex(sock, address)

    def _record(self, address) -> None:  # type: ignore[no-untyped-def]
        self.attempts.append(address)
        if address[0] not in ("127.0.0.1", "::1"):
            self.outside.append(address)  # (checked again as the test ends: code that swallows the error)
        assert address[0] in ("127.0.0.1", "::1"), f"a test tried to connect to {address}"


def root_calls(client: BotClient, count: int = 1, budget_s: float = 2.0) -> list[Any]:
    """``count`` calls of ``GET /`` through ``client`` under a watchdog of their own; both closed after."""
    watchdog = Watchdog()
    try:
        return [client.call(watchdog, "GET", "/", None, {}, budget_s) for _ in range(count)]
    finally:
        client.close()
        watchdog.close()
