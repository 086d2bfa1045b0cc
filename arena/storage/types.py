"""Column types with one promise each. ``UtcDateTime``: every datetime read back carries UTC.

SQLite keeps no offset and hands back naive datetimes, so an API field or a page's ``<time datetime>``
built from one had no timezone; PostgreSQL's ``timestamptz`` gives aware ones. Fixing it in the column
type fixes every reader at once (``models.py`` imports it under the name ``DateTime``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import DateTime as SaDateTime
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator


class UtcDateTime(TypeDecorator[datetime]):
    """A ``DateTime(timezone=True)`` that stores UTC and always reads back an aware UTC datetime."""

    impl = SaDateTime
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Dialect) -> Any:
        if isinstance(value, datetime):
            return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        return value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
