"""The deploy tests run on PostgreSQL, in a schema of their own."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from arena.storage.db import Database
from tests.arena.conftest import postgres_database


@pytest.fixture
def pg_database() -> Iterator[Database]:
    with postgres_database() as db:
        yield db
