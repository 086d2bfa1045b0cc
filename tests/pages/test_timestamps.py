"""Every timestamp the API answers, and every machine-readable time on a page, carries its timezone.

Regression: SQLite hands back naive datetimes, so ``created_at`` read "2026-12-01T23:20:16.123" with no
offset (a client reads it as local time); the column type now marks every read as UTC."""

from __future__ import annotations

import re
from datetime import datetime

from sqlalchemy import select

from arena.storage.models import Bot, Match

TIME_ATTR = re.compile(r'<time datetime="([^"]*)"')


def _aware(value: str) -> bool:
    return datetime.fromisoformat(value).tzinfo is not None


def _stamps(doc, key: str = "") -> list[str]:
    if isinstance(doc, dict):
        return [s for k, v in doc.items() for s in _stamps(v, k)]
    if isinstance(doc, list):
        return [s for v in doc for s in _stamps(v, key)]
    return [doc] if key.endswith("_at") and isinstance(doc, str) else []


def test_api_timestamps_were_naive_on_sqlite(client, world) -> None:
    docs = [client.get(path).get_json() for path in (
        f"/api/bots/{world.bots['rnd1']}", "/api/bots", "/api/matches", f"/api/matches/{world.finished[0]}",
        "/api/tournaments", f"/api/tournaments/{world.tournament}", "/api/leaderboards/pajarracos?players=3")]
    stamps = [s for doc in docs for s in _stamps(doc)]
    assert len(stamps) > 10
    assert [s for s in stamps if not _aware(s)] == []


def test_pages_machine_readable_times_were_naive_on_sqlite(client, world) -> None:
    paths = [f"/bots/{world.bots['rnd1']}", f"/matches/{world.finished[0]}", f"/tournaments/{world.tournament}",
             "/", "/leaderboards/pajarracos?players=3", "/matches", "/tournaments", "/bots"]
    stamps = [s for p in paths for s in TIME_ATTR.findall(client.get(p).get_data(as_text=True))]
    assert len(stamps) > 5
    assert [s for s in stamps if not _aware(s)] == []


def test_stored_datetimes_read_back_in_utc(context, world) -> None:
    with context.db.session() as session:
        assert session.scalar(select(Bot.created_at).limit(1)).utcoffset().total_seconds() == 0
        finished = session.scalar(select(Match.finished_at).where(Match.id == world.finished[0]))
        assert finished.tzinfo is not None


def test_every_datetime_column_reads_back_aware() -> None:
    """A column added later as a plain ``sqlalchemy.DateTime`` would bring naive datetimes back."""
    from arena.storage.models import Base
    from arena.storage.types import UtcDateTime

    plain = [f"{t.name}.{c.name}" for t in Base.metadata.tables.values() for c in t.columns
             if c.type.python_type is datetime and not isinstance(c.type, UtcDateTime)]
    assert plain == []
