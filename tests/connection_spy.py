"""A stand-in for ``socket.create_connection`` in the referee's transport: it records every attempt and
refuses to connect anywhere but loopback, so a test can assert that a refusal came before any
connection (and that tests never leave the machine)."""

from __future__ import annotations

import socket
from typing import Any

from referee.bot_client import BotClient
from referee.watchdog import Watchdog


class ConnectionSpy:
    def __init__(self) -> None:
        self.attempts: list[tuple[str, int]] = []
        self.real = socket.create_connection

    def __call__(self, address, *args, **kwargs):  # type: ignore[no-untyped-def]
        self.attempts.append(address)
        assert address[0] in ("127.0.0.1", "::1"), f"a test tried to connect to {address}"
        return self.real(address, *args, **kwargs)


def root_calls(client: BotClient, count: int = 1, budget_s: float = 2.0) -> list[Any]:
    """``count`` calls of ``GET /`` through ``client`` under a watchdog of their own; both closed after."""
    watchdog = Watchdog()
    try:
        return [client.call(watchdog, "GET", "/", None, {}, budget_s) for _ in range(count)]
    finally:
        client.close()
        watchdog.close()
