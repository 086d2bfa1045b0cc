"""Shared fixtures: real sample bots served on loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sample_bots.random_bot import make_bot
from sample_bots.sdk import BotServer, start_in_thread


@pytest.fixture(scope="session")
def random_bots() -> Iterator[list[BotServer]]:
    """Six random bots, one per seat of the biggest table."""
    servers = [start_in_thread(make_bot(seed)) for seed in range(6)]
    yield servers
    for server in servers:
        server.shutdown()
        server.server_close()
