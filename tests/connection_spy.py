"""A stand-in for ``socket.create_connection`` in the referee's transport: it records every attempt and
refuses to connect anywhere but loopback, so a test can assert that a refusal came before any
connection (and that tests never leave the machine)."""

from __future__ import annotations

import socket


class ConnectionSpy:
    def __init__(self) -> None:
        self.attempts: list[tuple[str, int]] = []
        self.real = socket.create_connection

    def __call__(self, address, *args, **kwargs):  # type: ignore[no-untyped-def]
        self.attempts.append(address)
        assert address[0] in ("127.0.0.1", "::1"), f"a test tried to connect to {address}"
        return self.real(address, *args, **kwargs)

